"""The protocol audit's rows (issue 37). A row is an :class:`~.audit_rows.Entry`: the paper's
LaTeX line and quote, the released code's ``file:line``, a reader of the profiles' value and the
verdict on the paper profile with its reason. The paper's side and the verdicts are data written
here once; the profiles' side is never typed: each row reads it, when the table is built, from
the objects the chapters train with (:mod:`.audit_reads`) or, for what is code rather than a
setting, from a small probe that runs that code (:mod:`.audit_probes`)."""

from __future__ import annotations

from .. import contamination as sc
from .. import data
from ..experiments.medical_plans import EXTRA_ARCHITECTURES, run_models
from ..experiments.setting1 import cases
from ..method_options import (AtOptions, JtOptions, KdOptions, RbrOptions, RrrOptions,
                              TapOptions)
from ..methods import methods_where
from ..models import target_layers
from . import audit_probes as probes
from . import audit_reads as reads
from .audit_rows import Entry, Verdict, name, render

S, R, D, X = Verdict.SAME, Verdict.RELEASED, Verdict.DEVIATION, Verdict.STANDIN
QUICK_CPU = "quick: scaled down for a 2-core CPU (the budget of a fresh-clone build)."



def _label_noise(p) -> dict[str, float] | str:
    """``{experiment: p}`` of the recorded-label noise the protocol's embedded data carry."""
    return {e: s.label_noise for e, s in p.embedded.items() if s.label_noise} or "none"


ENTRIES: tuple[Entry, ...] = (
    # ---------------------------------------------------------------- data and splits
    Entry("MNIST images", "data", 319, "MNIST contains 60,000", "create_decoy_mnist.py:95",
          lambda p: reads.mnist(p).source, S,
          "quick: the 5,000 real digits embedded in the package (no download)."),
    Entry("Decoy-MNIST label noise", "data", 319, "MNIST contains 60,000", "—",
          lambda p: _label_noise(reads.mnist(p)), X,
          "quick: 5% of the training digits recorded as another digit, the decoy drawn from the "
          "record. On 4,000 digits and three epochs No XS leaned on the decoy four times less "
          "than the paper's (accuracy lost when permuted 0.044 against 0.176); with the noise "
          "0.16, Base's clean accuracy 0.97 → 0.96 (docs/decoy-mnist-calibration.md)."),
    Entry("PNEU and KNEE images", "data", 319,
          "PNEU contains 5,232 paediatric chest radiographs",
          "create_pneu.py:230-233; create_knee.py:183-184", reads.source, S,
          "quick: a digits stand-in (PNEU: 0-4 vs 5-9; KNEE: digits 0-4 as grades); the real "
          "folders cannot be shipped."),
    Entry("Training images per class", "data", 319, "KNEE contains 8,260 radiographs",
          "src/data.py:168-174,200-202 (every image of the folders)",
          lambda p: reads.images(p, "per_class"), S, QUICK_CPU),
    Entry("Test images per class", "data", 320,
          "We use the pre-defined training and test splits for all datasets",
          "src/data.py:170,202 (the test folders)", lambda p: reads.images(p, "test_per_class"), S,
          QUICK_CPU),
    Entry("Image side (medical)", "data", 320,
          r"We centre-crop and resize to $224\!\times\!224$ pixels", "create_pneu.py:50-62,235",
          lambda p: reads.per_model(p, lambda r, m: r.image_size), S,
          "quick: 64 px for VGG-16, ResNet-18 and DenseNet-121 (their last targeted maps stay "
          "2×2), 32 px for the appendix architectures (CPU cost)."),
    Entry("Validation split", "data", 320,
          r"reserve $10\%$ of the training split for validation",
          "create_decoy_mnist.py:98-99; create_pneu.py:231,245-248", probes.val_fraction, S,
          "Drawn stratified by class from the training images, before contamination; its signals "
          "are permuted (the λ search's split)."),
    Entry("KNEE validation split", "data", 320,
          r"reserve $10\%$ of the training split for validation",
          "src/data.py:201 (the dataset's own val folder)", probes.val_fraction, S,
          "The released code validates KNEE on the dataset's own val folder; tapkit follows the "
          "text for every dataset and leaves that folder unused."),
    Entry("Data per seed", "data", 339, "We report averaged results from 5 different seeds.",
          "create_pneu.py:234-238; create_decoy_mnist.py:13,93 (contaminated once, seed 0)",
          probes.redrawn, D,
          "The text does not say; the released code drew the validation split and the signals "
          "once (seed 0) and varied only the training. tapkit redraws them with each seed, so "
          "the spread over seeds includes which images validate and where each signal lands."),
    Entry("Seeds", "data", 339, "We report averaged results from 5 different seeds.",
          "configs/config.yaml:11 (one seed per run)", reads.seeds, S,
          "quick: three seeds for the intervals over seeds, five for ResNet-18 (where three "
          "left TAP's reliance on KNEE and its Theorem-1 overlap on PNEU undecided) and for "
          "VGG-16 on PNEU (where three left \"TAP keeps deep CNNs off the tag\" undecided), four "
          "for DenseNet-121 on PNEU, RRR on DenseNet-121's four PNEU seeds (the paper's "
          "re-emergence case, ~4× a No XS run) and ResNet-18's first three, the stripe appendix "
          "on three; one for the appendix architectures and the stand-ins' Base, but three "
          "for ResNet-18's on KNEE, which \"TAP matches the Base model\" pairs with TAP's "
          "seeds (against one seed it was undecided); MNIST's Base on all three, since "
          "\"the Base model … insensitive\" needs its interval."),
    Entry("MNIST normalisation", "data", 319,
          r"MNIST contains 60,000 $28\!\times\!28$ pixel images of handwritten digits",
          "src/data.py:81-86", lambda p: {"mean": data.MNIST_MEAN, "std": data.MNIST_STD},
          R, "The text does not say; MNIST's own statistics, as the released code."),
    Entry("PNEU and KNEE normalisation", "data", 347, "we initialise with ImageNet-weights",
          "src/data.py:88-105 (each folder's grayscale mean and std)",
          lambda p: {"mean": data.IMAGENET_MEAN, "std": data.IMAGENET_STD}, D,
          "The text does not say. ImageNet weights expect ImageNet-normalised inputs; the "
          "released statistics (0.5711/0.1523, 0.5549/0.2232) are of the authors' preprocessed "
          "folders, which tapkit does not have. The gray image is copied to three channels."),
    # ---------------------------------------------------------------- contamination
    Entry("Decoy-MNIST patch", "data", 324,
          r"adding $4\!\times\!4$ pixel patches to a random corner",
          "create_decoy_mnist.py:41-47,92", probes.decoy_patch, S),
    Entry("Decoy-MNIST permuted split", "data", 326,
          "we choose random permutations of the labels",
          "create_decoy_mnist.py:51 (a random label per image)", lambda p: probes.mnist_permutation(), S,
          "The released code draws a random label for each image rather than permuting them."),
    Entry("PNEU tags", "data", 327, "adds ``ABC'' for normal and ``XYZ'' for pneumonic cases",
          "create_pneu.py:263", lambda p: sc.PNEU_TAGS, S),
    Entry("PNEU permuted split", "data", 327, "we choose to swap instead of randomising labels",
          "create_pneu.py:94", lambda p: probes.assignment(2), S),
    Entry("KNEE tags", "data", 327, "``ABC'' (grade 0), ``DEF'' (grade 1)",
          "create_knee.py:188", lambda p: sc.KNEE_TAGS, S,
          "The text's \"MNO (grade 5)\" is grade 4: the grades are 0-4."),
    Entry("KNEE permuted split", "data", 327, "randomises the string assignment",
          "create_knee.py:47 (a random tag per image)", lambda p: probes.assignment(5), S,
          "tapkit permutes the labels (each tag keeps its count); the released code draws a tag "
          "at random for each image."),
    Entry("Tag font and size", "data", 327, "we add text strings to simulate medical tags",
          "create_pneu.py:77-78,99-100; create_knee.py:31-32,52-53 (bold monospace, side // 10 "
          "= 22 px)", probes.tag_font, D,
          "Pillow's built-in scalable font needs no font file, so a tag looks the same on every "
          "machine; the released code asks matplotlib for whichever bold monospace font is "
          "installed. On small stand-in images tags are at least 10 px tall, to stay legible; "
          "the quick KNEE stand-in's five tags are 14 px tall, where ResNet-18 learns to tell "
          "them apart as the paper's models do (docs/standin-research.md)."),
    Entry("Tag placement and mask", "data", 332, "Strings in corners correlate with label",
          "create_pneu.py:110-111,132 (flush with the corner; a fixed 22×44 box masked)",
          probes.tag_place, D,
          "A small margin keeps the letters inside the image whatever the font's bearings; the "
          "mask is the box the tag covers, as an annotator would draw it, not a fixed box."),
    Entry("Stripe width and offset", "data", 669,
          "The stripes are 6 pixels wide and randomly placed up to 15 pixels away from the edge",
          "create_pneu.py:178-187; create_knee.py:133-140 (224 // 40 = 5 px, drawn 6 wide, "
          "0-10 px from the edge)", probes.stripe_geometry, S,
          "Scaled with the image side (quick: 64 px; KNEE's stand-in 4 px wide, where at 2 px "
          "No XS barely read its five brightnesses); the released code's offsets reach 10 px."),
    Entry("Stripe brightness", "data", 669, r"$255 - label * 127$",
          "create_pneu.py:151,167,173; create_knee.py:104,120", probes.stripe_brightness, S),
    Entry("Stripe experiments", "data", 669,
          "we add a vertical stripe to the sides of the images", "create_pneu.py:287-310",
          lambda p: tuple(name(m) for m in reads.medical(p).stripe_models), S,
          "quick: ResNet-18's No XS and TAP on three seeds (the CPU budget)."),
    Entry("Stand-in label noise", "data", 319,
          "PNEU contains 5,232 paediatric chest radiographs", "—",
          lambda p: _label_noise(reads.medical(p)), X,
          "The digits are easy where the x-rays are hard: with recorded-label noise (PNEU 5% "
          "flipped, KNEE half moved one grade) Base scores about what the paper's Base does and "
          "No XS has a reason to read the tag (docs/standin-research.md)."),
    # ---------------------------------------------------------------- models
    Entry("MNIST model", "model", 342, "We use a two-layer CNN", "src/model.py:176-195",
          lambda p: tuple(name(m) for m in reads.mnist(p).models), S),
    Entry("Medical models", "model", 342, "VGG-16, ResNet-18 and DenseNet-121",
          "src/model.py:13-38,81-113",
          lambda p: tuple(name(reads.variant(reads.medical(p), m))
                          + ("" if run_models(reads.medical(p), "pneu", [m], cases()) else " (not run)")
                          for m in reads.medical(p).models), S,
          "EfficientNet-B0 and MobileNet-v2 are the appendix's (LaTeX line 805). quick: VGG-16 "
          "at a quarter of its channels (the full width costs ~200-260 CPU-s a 64-px run), on "
          "PNEU only."),
    Entry("Two-layer CNN targets", "model", 345,
          "We apply TAP to both layers of the two-layer CNN", "src/model.py:187-192",
          lambda p: target_layers(reads.mnist(p).models[0]), S,
          "Each block's output after its max-pool, as the released code."),
    Entry("ResNet-18 targets", "model", 345, "the output of each of the four residual blocks",
          "src/model.py:66-73", lambda p: reads.targets(p, "resnet18"), S),
    Entry("DenseNet-121 targets", "model", 345,
          "we analogously chose the output of each of the four dense blocks",
          "src/model.py:94-108 (transition1-3 outputs, norm5)",
          lambda p: reads.targets(p, "densenet121"), S,
          "The dense blocks' outputs after their BatchNorm and ReLU; the released code takes the "
          "transitions' convolved, pooled, signed outputs (offered as densenet121_released)."),
    Entry("VGG-16 targets", "model", 345,
          "For VGG-16, we choose the output after each of the MaxPool layers",
          "src/model.py:130-140", lambda p: reads.targets(p, "vgg16"), S),
    Entry("VGG-16 classifier head", "model", 342, "VGG-16, ResNet-18 and DenseNet-121",
          "src/model.py:123-128 (25088→1024→ReLU→Dropout→classes)",
          lambda p: name(reads.variant(reads.medical(p), "vgg16")), R,
          "The text does not say; the released head, with which the paper's VGG-16 λ were tuned."),
    Entry("Appendix architectures' targets", "model", 805,
          "two deep CNNs, EfficientNet-B0 and MobileNet-v2", "—",
          lambda p: {m: reads.targets(p, m) for m in reads.medical(p).models
                     if m in EXTRA_ARCHITECTURES}, D,
          "The paper names no layers and the released code has no such models: four stage "
          "outputs spread over the depth, as LaTeX line 345 describes for the others."),
    Entry("Activation σ of Eq. 6", "model", 200, r"A^l = \sum_{c=1}^{C^l} \sigma(Z^l_c)",
          "src/loss.py:110 (outputs summed as they come, signed where linear)", reads.sigma, D,
          "σ applied where a target is taken before its activation (DenseNet's norm5: ReLU); "
          "linear bottleneck outputs (EfficientNet, MobileNet) take |·|, so a channel sum "
          "cannot cancel to zero over a tag."),
    Entry("Initialisation (MNIST)", "model", 347,
          "We use random initialisation for the two-layer CNN", "src/model.py:176-184",
          lambda p: "ImageNet weights" if reads.mnist(p).pretrained else "random", S),
    Entry("Initialisation (medical)", "model", 347, "we initialise with ImageNet-weights",
          "src/model.py:14-17,53-56", reads.initialisation, S,
          "quick: no ImageNet weights offline; a start pretrained on held-out digits instead."),
    Entry("Stand-in pretrained start", "model", 347, "we initialise with ImageNet-weights", "—",
          reads.pretraining, X,
          "Stands in for ImageNet weights on the digits stand-in: each main architecture first "
          "learns digits no stand-in image shows (docs/standin-research.md)."),
    # ---------------------------------------------------------------- training
    Entry("Class weights (PNEU)", "training", 347, "We choose cross-entropy for the task loss",
          "src/data.py:329-336; src/wrapper.py:143,247",
          lambda p: reads.medical(p).class_weights_for("pneu"), R,
          "The released cross-entropy weights PNEU's classes by N/N_c (normalised), in training "
          "and in the validation loss that picks λ; tapkit counts the run's own labels. quick: "
          "the stand-in's classes are balanced."),
    Entry("Class weights (KNEE, MNIST)", "training", 347,
          "We choose cross-entropy for the task loss", "src/data.py:336-337 (none)",
          lambda p: {"knee": reads.medical(p).class_weights_for("knee"),
                     "decoy-mnist": reads.mnist(p).class_weights_for("decoy-mnist")}, S),
    Entry("Optimiser", "training", 347, "We use SGD as optimiser", "src/wrapper.py:49-51",
          lambda p: reads.both(p, lambda s: s.optimizer), S,
          "quick: Adam; SGD on the small quick data leaves No XS underfit "
          "(docs/decoy-mnist-calibration.md)."),
    Entry("Momentum and weight decay", "training", 347, "with weight decay of 0.9",
          "src/wrapper.py:51; configs/config.yaml:38 (momentum 0.9, l2 0)", reads.momentum, R,
          "A weight decay of 0.9 would shrink the weights towards zero at every step; the "
          "released 0.9 is SGD's momentum, and its L2 term is off."),
    Entry("Learning rate (MNIST)", "training", 347, "use a learning rate of $10^{-3}$",
          "src/args.py:15 (a run's argument)", lambda p: reads.mnist(p).lr, S),
    Entry("Learning rate (medical)", "training", 347, "use a learning rate of $10^{-5}$",
          "configs/config.yaml:33", lambda p: reads.per_model(p, lambda r, m: r.lr), S,
          "quick: Adam at 1e-3 (VGG-16, without BatchNorm, 1e-4)."),
    Entry("Batch size (MNIST)", "training", 347, "We use a batch size of 256 for MNIST",
          "src/args.py:21 (a run's argument)", lambda p: reads.mnist(p).batch_size, S, QUICK_CPU),
    Entry("Batch size (medical)", "training", 347,
          "16 for the medical datasets (8 for DenseNet-121 with RBR, given memory constraints)",
          "configs/config.yaml:39", reads.batch_sizes, S, QUICK_CPU),
    Entry("Epochs", "training", 347, "We train for 50 epochs.", "configs/config.yaml:41",
          reads.epochs, S, QUICK_CPU),
    Entry("λ grid: TAP and RRR", "training", 348, "from $10^{-9}$ to 1 for TAP and RRR", "—",
          lambda p: f"TAP: {render(reads.grids(p, TapOptions))} | RRR: {render(reads.grids(p, RrrOptions))}",
          S,
          "quick: TAP three λ around the paper's choice on MNIST; on the stand-ins ResNet-18's "
          "two that the guarded search has chosen, DenseNet-121's one (it chose 1e-3 on both "
          "in every build since the calibration); RRR one value, the one ResNet-18's guarded "
          "search chose on both stand-ins, for DenseNet-121's PNEU runs too (no search of its "
          "own: CPU budget)."),
    Entry("λ grid: RBR", "training", 348, "1 to $10^9$ for RBR", "—", lambda p: reads.grids(p, RbrOptions),
          S, "quick: RBR keeps the paper's λ (its runs cost ~10× a No XS run)."),
    Entry("λ criterion", "training", 348,
          "evaluating the validation loss on $SC(X^*,permute(y))_{val}$", "—", probes.criterion, S),
    Entry("λ guard", "training", 348,
          "evaluating the validation loss on $SC(X^*,permute(y))_{val}$", "—", probes.guard, S,
          "The paper profile chooses as the paper does, among every converged run "
          "(lambda_guard=False). quick: the criterion alone chose a λ at which the network "
          "learned nothing (a constant prediction's loss beat the learners' on the stand-in, "
          "issue 20), so its search skips such runs; every choice table keeps the unguarded "
          "choice beside it (lam_unguarded)."),
    Entry("λ where not searched (MNIST)", "training", 562,
          "MNIST & - & - & - & - & - & - & - & - & - & $10^{-3}$ & $10^{-3}$ & $10^{4}$", "—",
          reads.unsearched, S),
    # ---------------------------------------------------------------- losses
    Entry("TAP norm", "losses", 217, r"denotes the L1-norm", "src/loss.py:111",
          lambda p: reads.options(p, TapOptions, "norm"), R,
          "The paper's λ were tuned with the released squared Frobenius norm; quick keeps "
          "Definition 2's L1 with its own λ search."),
    Entry("TAP mask per layer", "losses", 209,
          r"\mathcal{D}(M, l) = \text{AvgPool}(\text{MaxPool}(M), H^l, W^l)",
          "src/loss.py:100-108 (re-pooled from the previous layer's mask)",
          lambda p: reads.options(p, TapOptions, "pooling"), R,
          "Released: each layer's mask pooled from the previous layer's; quick: Eq. 7 from M."),
    Entry("TAP kernel κ", "losses", 212, r"We found a choice of $\kappa=3$", "src/loss.py:104",
          lambda p: reads.options(p, TapOptions, "kernel_size"), S),
    Entry("RRR scale", "losses", 179, r"\mathcal{L}^{RRR}_{XS}(X, M; \theta)",
          "src/loss.py:46-47 (mask × H·W/|M| before squaring)",
          lambda p: reads.options(p, RrrOptions, "scale"), R,
          "The released mask is scaled by H·W/|M| before squaring (a factor ~2,400 on MNIST), "
          "the scale the paper's λ assume. quick: released on MNIST, where RRR trains at the "
          "paper's λ; Eq. 4 as printed on the stand-ins, where its λ is searched."),
    Entry("Input-gradient pass", "losses", 176,
          "which targets spurious signals by penalising their input gradients",
          "src/explainer.py:12-16 (model.eval(): BatchNorm running statistics)",
          lambda p: {name(m): reads.options(p, m, "batchnorm") for m in methods_where(input_grad=True)},
          R,
          "The text does not say; the released code takes input gradients with BatchNorm on "
          "its running statistics."),
    Entry("RBR form", "losses", 184, "multiply influence functions with input gradients",
          "src/explainer.py:36-63; src/loss.py:53-61", lambda p: reads.options(p, RbrOptions, "variant"), R,
          "Released: the influence term of the plain parameter-gradient sum, without the task "
          "loss's path through x, summed over the batch. quick: released on MNIST, where RBR "
          "would train at the paper's λ (the quick profile leaves it out: its cost); the "
          "stand-ins train no RBR."),
    Entry("KD temperature", "losses", 968, "vanilla knowledge distillation (KD)",
          "configs/config.yaml:26; src/wrapper.py:286", lambda p: reads.options(p, KdOptions, "temperature"),
          R, "The paper gives none; quick: T = 4 (a common choice)."),
    Entry("AT form", "losses", 968, "attention transfer (AT)", "src/loss.py:70-83",
          lambda p: reads.options(p, AtOptions, "variant"), R,
          "Released: signed channel sums normalised per column, Frobenius distances summed over "
          "the layer pairs; quick: Zagoruyko & Komodakis' attention maps."),
    Entry("JT form", "losses", 968, "Jacobian transfer (JT)",
          "src/wrapper.py:370-371; src/loss.py:85-89", lambda p: reads.options(p, JtOptions, "variant"), R,
          "Released: the student's true-class input gradient against the teacher's saliency; "
          "quick: Srinivas & Fleuret's summed log-probabilities."),
    # ---------------------------------------------------------------- teachers
    Entry("Teacher architecture", "teachers", 343,
          "we use ResNet-18 as teacher for the medical datasets and the two-layer CNN for MNIST",
          "configs/config.yaml:15", lambda p: reads.teachers(p, lambda t, s: name(t.teacher(s))), S),
    Entry("Setting 2's data sets", "teachers", 404,
          "On PNEU, TAP with teacher annotations results in strong performances", "—",
          lambda p: reads.teachers(p, lambda t, s: t.datasets(s)), S,
          "quick: the medical Setting 2 on PNEU only, where its claims are judged (the paper's "
          "KNEE students, teachers and KD/AT runs cost ~450 CPU-s and judged nothing)."),
    Entry("Teachers' clean data", "teachers", 336,
          r"we hold out 10\% or 1\% of the training split as a clean dataset",
          "src/util.py:87-91 (a fraction of the clean set, sampled per seed)",
          lambda p: reads.teachers(p, lambda t, s: t.fractions), S),
    Entry("Teacher epochs", "teachers", 347, "We train for 50 epochs.", "src/args.py:7",
          lambda p: reads.teachers(p, reads.teacher_epochs), S, QUICK_CPU),
    Entry("Teacher explanation", "teachers", 297,
          "we use input gradients as the explanation method",
          "src/explainer.py:8-34 (gradient of the summed log-probabilities)", probes.saliency, S,
          "The released gradient is of the summed log-probabilities (offered as "
          "saliency='sum_log_prob')."),
    Entry("Saliency normalisation", "teachers", 298,
          "saliency maps $E$ contain absolute values normalised to $[0,1]$",
          "src/loss.py:20-21 (|·| summed over channels; the quantile rule needs no scale)",
          probes.normalised, S),
    Entry("Threshold rule", "teachers", 302, r"1 & \text{if $E_{ij} < \tau$}",
          "src/loss.py:23-27 (each image's lowest-τ quantile)",
          lambda p: reads.teachers(p, lambda t, s: t.threshold), R,
          "The paper's teacher λ were tuned with masks of each image's lowest τ quantile; an "
          "absolute τ on min-max saliency covers a very different share. quick: the quantile "
          "rule on MNIST, whose students train at a λ searched with ground-truth masks of "
          "about that coverage (Eq. 14's 9-18% collapsed them); Eq. 14 on the stand-ins."),
    Entry("Training τ", "teachers", 848, "0.05 & 0.986 (0.001) & 0.985 (0.001)", "—",
          lambda p: reads.teachers(p, lambda t, s: t.train_taus), S, "quick: τ = 0.01 only."),
    Entry("Annotation-quality τ", "teachers", 398,
          r"compares the teacher annotations to the ground-truth at different thresholds $\tau$",
          "explanation_overlap.py:90-95", lambda p: reads.teachers(p, lambda t, s: t.quality_taus), S),
    Entry("XS methods with teacher masks", "teachers", 396,
          "We focus on TAP and leave, for completeness, results for RRR and RBR", "—",
          lambda p: reads.teachers(p, lambda t, s: f"{render(tuple(name(m) for m in t.xs_methods))}"
                              f" (RRR/RBR with {render(t.xs_fractions or t.fractions)})"), S,
          "quick: TAP only (CPU budget)."),
    Entry("Random masks", "teachers", 400, "The annotations are better than random",
          "src/explainer.py:68-69 (random gradients, thresholded as a teacher's)",
          lambda p: reads.teachers(p, lambda t, s: t.random_masks), D,
          "MNIST: masks of the patch's coverage, one run per seed under every τ; PNEU/KNEE: the "
          "coverage of the teachers' masks at each τ, as the released random gradients give."),
    Entry("λ with teacher masks", "teachers", 575,
          "MNIST & - & - & - & - & - & - & - & - & - & $10^{-4}$ & $10^{-2}$ & $10^{4}$", "—",
          reads.student_lambdas, D,
          "No Setting-2 λ search: the paper's chosen values are used (a search would repeat "
          "every student ten times). quick medical: Setting 1's choice, the paper's being tuned "
          "at 224 px from ImageNet weights. quick MNIST: TAP at Setting 1's searched λ, in the "
          "form it searched (Definition 2; the paper's 1e-4 was tuned on the released form and "
          "did nothing there: No XS's permuted accuracy)."),
    Entry("λ for KD, AT and JT", "teachers", 970,
          "expand the range to $10^{-9}$ to $10^{4}$ for AT, JT and KD", "—", reads.kd_lambdas, D,
          "No search: the paper's chosen values (its KD table); quick medical: λ = 1."),
    Entry("KD, AT and JT runs", "teachers", 968,
          r"We compare our results from TAP with teacher annotations ($\tau = 0.01$)", "—",
          reads.kd_setup, S, "quick: KD and AT on ResNet-18 with the 10% teacher (CPU budget)."),
    Entry("Setting-2 students", "teachers", 937,
          "over five runs on PNEU using XS with teacher (10\\%) and random (rnd) annotations",
          "—", reads.students, S, "quick: MNIST on two of Setting 1's three seeds (the report "
          "judges its claims there; CPU budget); the stand-in on one seed, ResNet-18 only (CPU "
          "budget: its claims are about the real data)."),
    # ---------------------------------------------------------------- metrics
    Entry("MNIST metric", "metrics", 339, "We measure accuracy for MNIST",
          "src/trainer.py:118", lambda p: probes.metric("mnist"), S),
    Entry("PNEU metric", "metrics", 339, "F-score for PNEU given class imbalance",
          "src/wrapper.py:123,128; src/trainer.py:114,119", lambda p: probes.metric("pneu"), S,
          "tapkit: the pneumonia class's F-score of the argmax over the whole split; released: "
          "torchmetrics' BinaryF1Score of the class-1 logit, averaged over batches of 32."),
    Entry("KNEE metric", "metrics", 339,
          "mean absolute error (MAE) for KNEE given ordinal scores", "src/wrapper.py:137-139",
          lambda p: probes.metric("knee"), S),
    Entry("Test splits", "metrics", 710, "on three versions of the test split",
          "create_pneu.py:278-285 (test: swapped tags; test_cor: the label's)", probes.evaluated_splits, S),
    Entry("Δ-metric", "metrics", 339,
          r"measuring the change in the respective metrics ($\Delta$-metric)", "—", probes.delta, S),
    Entry("DNC rule", "metrics", 916, "if at least three runs converged", "—", probes.dnc, S,
          "More than half of a cell's runs: 3 of the paper's 5."),
    Entry("Overlap: layers", "metrics", 584,
          "the four penalised convolutional layers (the last four of five for VGG-16)",
          "explanation_overlap_acts.py:84-90", reads.overlap_targets, S),
    Entry("Overlap: computation", "metrics", 584,
          "we upsample to match dimensions", "explanation_overlap_acts.py:37-43,88-112 "
          "(the permuted test folder; nearest upsampling; per-image averages)", probes.overlap, D,
          "The paper names neither: tapkit reads SC(X*, y)_test, where the tag reveals the label, "
          "upsamples bilinearly and pools the pixel counts over the images; the released script "
          "reads the test folder (tags permuted), nearest-neighbour, and averages per image."),
    # ---------------------------------------------------------------- Table 1
    Entry("Batch and image size", "Table 1", 279,
          r"for batches of 16 $224\!\times\!224$-pixel images", "—",
          reads.bench_size, S, QUICK_CPU),
    Entry("Timed rounds", "Table 1", 279,
          "Iterations per second (it/s) and memory usage in GB (mem)", "—", reads.bench_rounds, D,
          "The paper does not say how it timed; tapkit interleaves the methods' steps in rounds, "
          "No XS twice in each, and gives each ratio to No XS (the round's mean of its two "
          "steps) an interval over them."),
    Entry("Optimiser timed", "Table 1", 347, "We use SGD as optimiser", "—",
          reads.bench_optimizer, S),
    Entry("VGG-16 head timed", "Table 1", 272, "VGG-16", "src/model.py:123-128",
          reads.bench_vgg, R,
          "The released head (25088→1024→classes), as the paper's runs had it; the speed page "
          "and the GPU lease time it from the same protocol (tapkit.experiments.table1); quick "
          "times the same head, the one its chapters train."),
    Entry("RBR form timed", "Table 1", 276, "RBR & 1.7 & 8.6",
          "src/explainer.py:36-63", reads.bench_rbr, R,
          "The released losses (options=RELEASED, RBR's among them), as the authors timed them; "
          "the speed page and the GPU lease time them from the same protocol "
          "(tapkit.experiments.table1). quick: the equations' forms (RBR's full derivative)."),
)



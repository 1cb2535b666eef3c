"""Teachers (saliency, thresholds, annotation quality, configs) and the distillation losses,
checked against numbers worked out by hand."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from tapkit import baselines, losses, teachers
from tapkit import data as data_module
from tapkit.data import Split, Task
from tapkit.config import TrainConfig
from tapkit.experiments import run, store as store_module
from tapkit.experiments.store import ResultStore, load_trained, teacher_saliency


# --------------------------------------------------------------------------- saliency (Eq. 13)

def _linear_model():
    """2 x 2 single-channel images, two classes; class 0 wins on an all-ones image (5.5 vs 0)."""
    model = nn.Sequential(nn.Flatten(), nn.Linear(4, 2, bias=False))
    with torch.no_grad():
        model[1].weight.copy_(torch.tensor([[1.0, -2.0, 0.5, 4.0],
                                            [0.0, 0.0, 0.0, 0.0]]))
    return model.eval()


def test_saliency_of_a_linear_model_is_its_normalised_weight_row():
    # d logit_0 / dx = w_0 = [1, -2, 0.5, 4]; |w_0| min-max normalised: (|w| - 0.5) / 3.5
    e = teachers.saliency(_linear_model(), torch.ones(1, 1, 2, 2))
    assert torch.allclose(e.flatten(), torch.tensor([1 / 7, 3 / 7, 0.0, 1.0]), atol=1e-6)


def test_saliency_for_a_given_target_uses_that_class():
    model = _linear_model()
    with torch.no_grad():
        model[1].weight[1] = torch.tensor([3.0, 1.0, 2.0, 1.0])
    e = teachers.saliency(model, torch.ones(1, 1, 2, 2), target=torch.tensor([1]))
    assert torch.allclose(e.flatten(), torch.tensor([1.0, 0.0, 0.5, 0.0]), atol=1e-6)


def test_sum_log_prob_saliency_matches_the_closed_form_gradient():
    # f = W x, s = sum_k log softmax_k = sum_k f_k - K logsumexp(f): ds/dx = sum_k w_k - K p^T W
    model = _linear_model()
    x = torch.tensor([[[[0.2, -0.1], [0.4, 0.3]]]])
    w = model[1].weight.detach()
    p = torch.softmax(w @ x.flatten(), dim=0)
    grad = (w.sum(0) - 2 * p @ w).abs()
    expected = (grad - grad.min()) / (grad.max() - grad.min())
    e = teachers.saliency(model, x, method="sum_log_prob")
    assert torch.allclose(e.flatten(), expected, atol=1e-5)


def test_unknown_saliency_method_lists_the_known_ones():
    with pytest.raises(ValueError, match="integrated_gradients"):
        teachers.saliency(_linear_model(), torch.ones(1, 1, 2, 2), method="magic")


# --------------------------------------------------------------------------- thresholds (Eq. 14)

def test_absolute_rule_marks_exactly_the_pixels_below_tau():
    e = torch.tensor([0.0, 0.0099, 0.01, 0.5, 0.05, 1.0]).reshape(1, 1, 2, 3)
    for tau, expected in [(0.01, [1, 1, 0, 0, 0, 0]), (0.05, [1, 1, 1, 0, 0, 0]),
                          (0.1, [1, 1, 1, 0, 1, 0])]:
        mask = teachers.threshold(e, tau, "absolute")
        assert mask.flatten().tolist() == expected


@pytest.mark.parametrize("tau", [0.01, 0.05, 0.1])
def test_quantile_rule_marks_the_lowest_tau_fraction_of_every_image(tau):
    g = torch.Generator().manual_seed(0)
    e = teachers.normalise(torch.rand(6, 1, 28, 28, generator=g))
    e[0] = e[0] * 0.001  # a dim image: the absolute rule would mark all of it, quantile tau of it
    mask = teachers.threshold(e, tau, "quantile")
    n = 28 * 28
    # torch.quantile interpolates between the floor(tau * (n - 1)) + 1-th and the next value
    expected = (math.floor(tau * (n - 1)) + 1) / n
    assert torch.allclose(mask.flatten(1).mean(1), torch.full((6,), expected))
    for img, m in zip(e.flatten(1), mask.flatten(1).bool()):
        assert img[m].max() < img[~m].min()  # the marked pixels are the least salient ones


def test_quantile_rule_marks_ties_at_the_cut_off_like_the_released_code():
    e = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.5, 1.0]).reshape(1, 1, 2, 3)
    assert teachers.threshold(e, 0.1, "quantile").sum().item() == 4


def test_threshold_rejects_unknown_rules_and_taus():
    e = torch.zeros(1, 1, 2, 2)
    with pytest.raises(ValueError, match="expected one of"):
        teachers.threshold(e, 0.1, "median")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        teachers.threshold(e, 5.0)


# --------------------------------------------------------------------------- annotation quality

def test_precision_and_recall_of_a_hand_made_case():
    truth = torch.zeros(2, 1, 3, 3)
    truth[0, 0, 0, :2] = 1  # 2 spurious pixels in image 0
    truth[1, 0, 2, 2] = 1   # 1 in image 1
    pred = torch.zeros(2, 1, 3, 3)
    pred[0, 0, 0, 1:] = 1   # hits (0, 1), misses (0, 2)
    pred[1, 0, 1, 1:] = 1   # two misses
    pred[1, 0, 2, 2] = 1    # one hit
    precision, recall = teachers.precision_recall(pred, truth)
    assert precision == pytest.approx(2 / 5) and recall == pytest.approx(2 / 3)


def test_annotation_quality_rows_follow_the_thresholds():
    e = torch.tensor([0.0, 0.02, 0.5, 1.0]).reshape(1, 1, 2, 2)
    truth = torch.tensor([1.0, 1.0, 0.0, 0.0]).reshape(1, 1, 2, 2)
    rows = teachers.annotation_quality(e, truth, [0.01, 0.05], rules=["absolute"])
    assert [(r["tau"], r["coverage"], r["precision"], r["recall"]) for r in rows] == [
        (0.01, 0.25, 1.0, 0.5), (0.05, 0.5, 1.0, 1.0)]


def test_random_masks_have_the_asked_coverage_and_repeat_with_the_seed():
    a = teachers.random_masks((200, 1, 28, 28), 0.02, seed=3)
    assert abs(a.mean().item() - 0.02) < 0.002  # 5 standard errors of 156,800 draws
    assert torch.equal(a, teachers.random_masks((200, 1, 28, 28), 0.02, seed=3))
    assert not torch.equal(a, teachers.random_masks((200, 1, 28, 28), 0.02, seed=4))
    truth = torch.zeros_like(a)
    truth[:, :, :4, :4] = 1
    precision, recall = teachers.precision_recall(a, truth)
    assert abs(precision - 16 / 784) < 0.01 and abs(recall - 0.02) < 0.01
    with pytest.raises(ValueError, match="coverage"):
        teachers.random_masks((1, 1, 2, 2), 1.5)


# --------------------------------------------------------------------------- configs

def test_teacher_config_holds_out_the_fraction_and_forgets_the_student_method():
    student = TrainConfig(method="tap", lam=1e-4, tau=0.05, epochs=3, seed=2)
    teacher = teachers.teacher_config(student, 0.1)
    assert (teacher.method, teacher.lam) == ("none", 0.0)
    assert (teacher.data, teacher.clean_fraction) == ("holdout", 0.1)
    assert (teacher.epochs, teacher.seed, teacher.tau) == (3, 2, TrainConfig().tau)
    assert teacher == teachers.teacher_config(student.replace(method="rrr", lam=1e-2), 0.1)
    taught = teachers.with_teacher(student, teacher, annotation="teacher")
    assert taught.clean_fraction == 0.1 and taught.teacher == teacher and taught.method == "tap"
    with pytest.raises(ValueError, match="seed"):
        teachers.with_teacher(student.replace(seed=0), teacher, annotation="teacher")
    with pytest.raises(ValueError, match="fraction"):
        teachers.teacher_config(student, 1.0)


# --------------------------------------------------------------------------- KD, AT, JT

def test_kd_is_the_temperature_scaled_kl_divergence():
    student = torch.zeros(1, 2)
    teacher = torch.tensor([[math.log(3.0), 0.0]])  # softmax: (3/4, 1/4)
    expected = 0.75 * math.log(0.75 / 0.5) + 0.25 * math.log(0.25 / 0.5)
    assert baselines.kd(student, teacher, temperature=1.0).item() == pytest.approx(expected, rel=1e-5)
    # T = 2: teacher softmax(log(3)/2, 0) = (sqrt 3, 1) / (sqrt 3 + 1), scaled by T^2 = 4
    p = math.sqrt(3) / (math.sqrt(3) + 1)
    expected_t2 = 4 * (p * math.log(p / 0.5) + (1 - p) * math.log((1 - p) / 0.5))
    assert baselines.kd(student, teacher, temperature=2.0).item() == pytest.approx(expected_t2, rel=1e-5)


def test_at_is_the_distance_between_normalised_attention_maps():
    student = torch.tensor([[[[1.0, 0.0]], [[0.0, 1.0]]]])   # sum_c A_c^2 = (1, 1)
    teacher = torch.tensor([[[[2.0, 0.0]], [[0.0, 0.0]]]])   # sum_c A_c^2 = (4, 0)
    # || (1, 1)/sqrt 2 - (1, 0) || = sqrt(2 - sqrt 2)
    expected = math.sqrt(2 - math.sqrt(2))
    assert baselines.at([student], [teacher]).item() == pytest.approx(expected, rel=1e-5)
    # two layers: the mean; an identical layer adds 0
    assert baselines.at([student, teacher], [teacher, teacher]).item() == pytest.approx(expected / 2,
                                                                                    rel=1e-5)


def test_at_resizes_a_student_map_of_another_size():
    # uniform maps stay uniform under bilinear resizing, so the distance is 0
    uniform = baselines.at([torch.ones(1, 1, 4, 4)], [torch.ones(1, 3, 2, 2)])
    assert uniform.item() == pytest.approx(0.0, abs=1e-6)
    # a 4x4 map whose left half is hot, resized to 2x2, matches a 2x2 teacher with a hot left column
    student = torch.zeros(1, 1, 4, 4)
    student[..., :2] = 1.0
    teacher = torch.tensor([[[[1.0, 0.0], [1.0, 0.0]]]])
    assert baselines.at([student], [teacher]).item() == pytest.approx(0.0, abs=1e-6)


def test_at_pairs_layers_by_resolution_when_the_counts_differ():
    # VGG-16's five pools against ResNet-18's four stages at 224 px: the first pool goes unpaired
    assert baselines.pair_by_resolution([112, 56, 28, 14, 7], [56, 28, 14, 7]) == [
        (1, 0), (2, 1), (3, 2), (4, 3)]
    # the other way round; and the nearest size in log scale (|ln 8/10| < |ln 16/10|)
    assert baselines.pair_by_resolution([56, 28], [112, 56, 28, 14]) == [(0, 1), (1, 2)]
    assert baselines.pair_by_resolution([10], [16, 8]) == [(0, 1)]
    assert baselines.pair_by_resolution([3, 2], [9, 1]) == [(0, 0), (1, 1)]  # same count: in order
    with pytest.raises(ValueError, match="at least one"):
        baselines.pair_by_resolution([], [4])
    # an unpaired student layer adds nothing: a 4x4 student layer beside two 2x2 and 1x1 pairs
    hot = torch.tensor([[[[1.0, 0.0], [0.0, 0.0]]]])
    cold = torch.tensor([[[[0.0, 0.0], [0.0, 1.0]]]])  # attention maps e0 and e3: distance sqrt 2
    extra = torch.rand(1, 2, 4, 4)
    one = torch.ones(1, 1, 1, 1)
    value = baselines.at([extra, hot, one], [cold, one]).item()
    assert value == pytest.approx(math.sqrt(2) / 2, rel=1e-5)


def test_jt_is_the_squared_distance_between_normalised_gradients():
    student = torch.tensor([[[[3.0, 4.0]]], [[[1.0, 0.0]]]])  # normalised: (0.6, 0.8), (1, 0)
    teacher = torch.tensor([[[[1.0, 0.0]]], [[[2.0, 0.0]]]])  # normalised: (1, 0), (1, 0)
    # image 0: 0.4^2 + 0.8^2 = 0.8; image 1: 0; batch mean 0.4
    assert baselines.jt(student, teacher).item() == pytest.approx(0.4, rel=1e-6)


# --------------------------------------------------------------------------- end to end

def _tiny_experiment(clean_fraction: float, n: int = 160, side: int = 12):
    """Two classes of noise images; the class is written in a 3x3 corner patch of the
    contaminated splits only. The clean holdout and the clean test split have no patch."""
    g = torch.Generator().manual_seed(0)

    def split(count, patch, permute=False):
        y = torch.randint(0, 2, (count,), generator=g)
        x = 0.3 * torch.randn(count, 1, side, side, generator=g)
        x[:, 0, 5:8, 5:8] += (2 * y.float() - 1)[:, None, None]  # the real signal
        mask = torch.zeros(count, 1, side, side)
        if patch:
            code = y[torch.randperm(count, generator=g)] if permute else y
            x[:, 0, :3, :3] = (4 * code.float() - 2)[:, None, None]
            mask[:, :, :3, :3] = 1.0
        return Split(x, y, mask)

    splits = {"train": split(n, True), "val": split(32, True, True),
              "test_contaminated": split(64, True), "test_permuted": split(64, True, True),
              "test_clean": split(64, False), "train_clean": split(n, False)}
    if clean_fraction > 0:
        splits["clean_holdout"] = split(48, False)
    splits["val_clean"] = split(32, False)
    return Task("tiny", 2, 1, side, "accuracy"), splits


def test_a_student_with_teacher_annotations_trains_its_teacher_first(tmp_path, monkeypatch):
    for module in (run, store_module):
        monkeypatch.setattr(module, "experiment_data",
                            lambda cfg: _tiny_experiment(cfg.clean_fraction))
    base = TrainConfig(method="tap", lam=1e-3, epochs=1, batch_size=32)
    teacher = teachers.teacher_config(base, 0.1)
    student = teachers.with_teacher(base, teacher, annotation="teacher", tau=0.1,
                                    threshold="quantile")
    store = ResultStore(tmp_path)
    record = store.run(student, "cpu", progress=False)
    assert record["status"] == "ok" and record["config"]["teacher"] == teacher.to_dict()
    teacher_record = store.load(teacher)
    assert teacher_record is not None and teacher_record["config"]["data"] == "holdout"
    # the student's masks are the teacher's lowest-saliency 10% of every training image
    e, data = teacher_saliency(teacher, tmp_path, "cpu")
    masks = teachers.annotation_masks(student, data, load_trained(teacher, tmp_path), "cpu")
    assert torch.equal(masks, teachers.threshold(e, 0.1, "quantile"))
    assert masks.flatten(1).mean(1).min().item() >= 0.1


def test_random_masks_take_the_coverage_they_are_given():
    _, splits = _tiny_experiment(0.0)
    data = splits["train"]
    base = TrainConfig(method="tap", lam=1e-3, annotation="random")
    truth = data.mask.mean().item()
    assert teachers.annotation_masks(base, data, None, "cpu").mean().item() == pytest.approx(truth, abs=0.02)
    matched = teachers.annotation_masks(base.replace(random_coverage=0.6), data, None, "cpu")
    assert matched.mean().item() == pytest.approx(0.6, abs=0.02)  # 160 x 144 pixels: std 0.003
    # set, the field is part of the config's hash
    assert base.key() != base.replace(random_coverage=0.6).key()
    with pytest.raises(ValueError, match="random_coverage"):
        TrainConfig(annotation="random", random_coverage=1.5)


def test_a_small_holdout_keeps_one_image_of_every_class():
    y = np.repeat(np.arange(3), 5)  # 1% of five images per class rounds to 0
    rest, held = data_module.stratified_split(y, 0.01, np.random.default_rng(0))
    assert sorted(y[held].tolist()) == [0, 1, 2] and len(rest) == 12
    rest, held = data_module.stratified_split(y, 0.0, np.random.default_rng(0))
    assert len(held) == 0 and len(rest) == 15


# ---------------------------------------------- the released AT and JT (issue 37; src/loss.py)

def _columns_normalised(m):
    """A map (H x W, nested lists) with each column scaled to unit L2 norm, by hand."""
    h, w = len(m), len(m[0])
    norms = [math.sqrt(sum(m[i][j] ** 2 for i in range(h))) for j in range(w)]
    return [[m[i][j] / norms[j] for j in range(w)] for i in range(h)]


def _frobenius(a, b):
    return math.sqrt(sum((x - y) ** 2 for ra, rb in zip(a, b) for x, y in zip(ra, rb)))


def test_released_at_sums_the_distances_of_column_normalised_signed_channel_sums():
    student = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]], [[1.0, 0.0], [0.0, -2.0]]]])  # 1x2x2x2
    teacher = torch.ones(1, 3, 2, 2)
    # signed channel sum [[2, 2], [3, 2]] (the -2 counts), columns (2, 3)/√13 and (2, 2)/√8;
    # the teacher's columns (1, 1)/√2
    expected = _frobenius(_columns_normalised([[2.0, 2.0], [3.0, 2.0]]),
                          _columns_normalised([[1.0, 1.0], [1.0, 1.0]]))
    assert baselines.at_released([student], [teacher]).item() == pytest.approx(expected, rel=1e-6)
    # summed over the layer pairs, not averaged (the cited AT averages them)
    two = baselines.at_released([student, student], [teacher, teacher]).item()
    assert two == pytest.approx(2 * expected, rel=1e-6)
    # a batch: the mean over images
    batch = baselines.at_released([torch.cat([student, teacher[:, :2]])], [torch.cat([teacher] * 2)])
    assert batch.item() == pytest.approx(expected / 2, rel=1e-6)


def test_released_at_resizes_the_teachers_normalised_map_to_the_students_size():
    teacher = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]])  # columns (1, 0) and (0, 1) already
    # nearest upsampling to 4x4: columns (1, 1, 0, 0) twice, then (0, 0, 1, 1) twice
    student = torch.tensor([[[[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0],
                              [0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]]]])
    # student columns normalise to (1, 1, 0, 0)/√2; the teacher's upsampled ones stay (1, 1, 0, 0)
    expected = 4 * (2 * (1 - 1 / math.sqrt(2)) ** 2)  # four columns, two entries each
    assert baselines.at_released([student], [teacher]).item() == pytest.approx(
        math.sqrt(expected), rel=1e-6)


def test_released_jt_is_the_squared_distance_of_column_normalised_gradient_maps():
    # image 0: channels (1, 4) + (2, 0) sum to the column (3, 4) -> (0.6, 0.8); teacher (1, 0)
    student = torch.tensor([[[[1.0], [4.0]], [[2.0], [0.0]]], [[[1.0], [0.0]], [[1.0], [0.0]]]])
    teacher = torch.tensor([[[[5.0], [0.0]]], [[[2.0], [0.0]]]]).expand(2, 2, 2, 1)
    # image 0: 0.4^2 + 0.8^2 = 0.8; image 1: (1, 0) against (1, 0): 0; batch mean 0.4
    assert baselines.jt_released(student, teacher).item() == pytest.approx(0.4, rel=1e-6)
    with pytest.raises(ValueError, match="gradient shapes differ"):
        baselines.jt_released(student, teacher[:, :1])


def test_the_released_jt_takes_the_students_true_class_gradient():
    w = torch.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])  # two classes over three inputs
    x = torch.tensor([[0.2, -0.1, 0.4], [1.0, 0.5, -0.3]], requires_grad=True)
    y = torch.tensor([1, 0])
    logits = x @ w.T
    grad = baselines.class_input_gradients(logits, x, y)
    p = torch.softmax(logits.detach(), dim=1)
    expected = w[y] - p @ w  # d/dx log p_y = w_y - sum_k p_k w_k
    assert torch.allclose(grad, expected, atol=1e-6)
    assert grad.requires_grad  # a graph for the double backward


def test_at_and_jt_options_keep_the_keys_of_runs_stored_before_they_had_a_variant():
    from tapkit.method_options import AtOptions, JtOptions

    teacher = TrainConfig(data="holdout", clean_fraction=0.1)
    at = TrainConfig(method="at", lam=1.0, teacher=teacher)
    jt = TrainConfig(method="jt", lam=1e-7, teacher=teacher)
    assert at.options == AtOptions() and at.to_dict()["options"] == {}  # as NoOptions wrote it
    assert jt.to_dict()["options"] == {"batchnorm": "running"}  # no "variant" at its default
    released = jt.replace(options=JtOptions(variant="released"))
    assert released.to_dict()["options"]["variant"] == "released" and released.key() != jt.key()
    assert TrainConfig.from_dict(released.to_dict()) == released
    with pytest.raises(ValueError, match="AtOptions.variant must be one of 'paper', 'released'"):
        AtOptions(variant="zagoruyko")


def test_saliency_by_region_averages_e_on_the_patch_the_strokes_and_the_background():
    from tapkit.book.mnist_setting2 import saliency_by_region
    from tapkit.data import MNIST_MEAN, MNIST_STD

    # one 2 x 2 image: the patch top left (E 0.6), a white stroke top right (E 0.8), two blank
    # pixels (E 0.1 and 0.3); a second seed with every E halved
    raw = torch.tensor([[[[0.0, 1.0], [0.0, 0.0]]]])
    x = (raw - MNIST_MEAN) / MNIST_STD
    mask = torch.tensor([[[[1.0, 0.0], [0.0, 0.0]]]])
    split = Split(x, torch.tensor([3]), mask)
    e = torch.tensor([[[[0.6, 0.8], [0.1, 0.3]]]])
    table = saliency_by_region({(0.1, 0): (e, split), (0.1, 1): (e / 2, split)})
    (row,) = table.itertuples()
    assert row.annotator == "teacher_10"
    assert row.patch == pytest.approx((0.6 + 0.3) / 2)
    assert row.stroke == pytest.approx((0.8 + 0.4) / 2)
    assert row.background == pytest.approx((0.2 + 0.1) / 2)


def test_medical_saliency_by_region_says_why_the_masks_miss_the_tags():
    from tapkit.book import medical_setting2 as s2
    from tapkit.data import IMAGENET_MEAN, IMAGENET_STD, brightness

    # one 3-channel 2 x 2 image, ImageNet-normalised: a bright tag pixel top left (E 0.3), a
    # white stroke top right (E 0.8), two black pixels (E 0.1 and 0.1)
    raw = torch.tensor([[[[1.0, 1.0], [0.0, 0.0]]]]).expand(1, 3, 2, 2)
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    x = (raw - mean) / std
    assert torch.allclose(brightness(x), raw[:, :1])
    mask = torch.tensor([[[[1.0, 0.0], [0.0, 0.0]]]])
    e = torch.tensor([[[[0.3, 0.8], [0.1, 0.1]]]])
    regions = s2.saliency_by_region({("pneu", "teacher_10", 0): (e, Split(x, torch.tensor([1]), mask))})
    (row,) = regions.itertuples()
    assert (row.experiment, row.annotator) == ("pneu", "teacher_10")
    assert (row.tag, row.stroke, row.background) == pytest.approx((0.3, 0.8, 0.1))
    # precision 0.1 of annotated pixels on a tag covering 0.25: below random, and why
    quality = pd.DataFrame({"experiment": "pneu", "annotator": "teacher_10", "tau": [0.01, 0.1],
                            "precision": [0.1, 0.2], "recall": [0.1, 0.5]})
    text = s2.quality_findings(quality, {"pneu": 0.25}, regions)
    assert "0.40–0.80× random's (no better than random anywhere)" in text
    assert ("PNEU 10% teacher: tags 0.300, strokes 0.800, background 0.100. Where the tags' E lies "
            "above the background's, E < τ marks the blank background before the tags") in text
    # E, mask and brightness of different shapes are refused
    with pytest.raises(ValueError, match="shapes differ"):
        teachers.saliency_by_region(e, mask[..., :1], brightness(x))

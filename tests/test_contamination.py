import numpy as np
import pytest

from tapkit import contamination as sc


def test_corner_patch_lands_where_the_mask_says_with_the_label_value():
    rng = np.random.default_rng(0)
    clean = rng.uniform(0, 100, size=(50, 28, 28)).astype(np.float32)
    labels = np.arange(50) % 10
    out, mask = sc.corner_patch(clean, labels, rng)
    for img, m, y, orig in zip(out, mask, labels, clean):
        rows, cols = np.nonzero(m)
        assert len(rows) == 16
        assert rows.max() - rows.min() == 3 and cols.max() - cols.min() == 3
        assert rows.min() in (0, 24) and cols.min() in (0, 24)  # a corner
        np.testing.assert_array_equal(img[m == 1], 255 - 25 * y)
        np.testing.assert_array_equal(img[m == 0], orig[m == 0])


def test_corner_patch_uses_all_four_corners():
    rng = np.random.default_rng(1)
    _, mask = sc.corner_patch(np.zeros((200, 28, 28)), np.zeros(200, int), rng)
    corners = {(int(m[0, 0]), int(m[0, 27]), int(m[27, 0]), int(m[27, 27])) for m in mask}
    assert corners == {(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)}


def test_corner_patch_is_seeded():
    a = sc.corner_patch(np.zeros((10, 28, 28)), np.arange(10), np.random.default_rng(3))
    b = sc.corner_patch(np.zeros((10, 28, 28)), np.arange(10), np.random.default_rng(3))
    np.testing.assert_array_equal(a[1], b[1])


def test_text_tag_ink_stays_inside_a_corner_box_and_depends_on_the_label():
    rng = np.random.default_rng(0)
    clean = np.zeros((40, 96, 96), np.float32)
    labels = np.arange(40) % 2
    out, mask = sc.text_tag(clean, labels, rng)
    for img, m in zip(out, mask):
        rows, cols = np.nonzero(m)
        box = m[rows.min(): rows.max() + 1, cols.min(): cols.max() + 1]
        assert box.all()  # the mask is the tag's whole box
        assert abs((rows.max() - rows.min() + 1) - 96 * 0.1) <= 4  # about a tenth of the side
        assert not ((img > 0) & (m == 0)).any()  # ink only inside the box
        assert (img[m == 1] == 255).any()
        near_top, near_left = rows.min() < 48, cols.min() < 48
        assert (rows.min() <= 3 if near_top else rows.max() >= 92)
        assert (cols.min() <= 3 if near_left else cols.max() >= 92)
    ink = [sc.render_text(t, 10) for t in sc.PNEU_TAGS]
    assert ink[0].shape != ink[1].shape or not np.array_equal(ink[0], ink[1])


def test_a_label_box_tag_is_black_letters_on_a_white_box_covering_the_background():
    rng = np.random.default_rng(0)
    clean = np.full((6, 64, 64), 100.0, np.float32)  # a mid-grey background
    labels = np.arange(6) % 2
    out, mask = sc.text_tag(clean.copy(), labels, rng, value=0.0, box=255.0)
    plain, plain_mask = sc.text_tag(clean.copy(), labels, np.random.default_rng(0))
    np.testing.assert_array_equal(mask, plain_mask)  # the same boxes, in the same corners
    for img, m, ref in zip(out, mask, plain):
        inside = img[m == 1]
        assert set(np.unique(inside)) == {0.0, 255.0}  # nothing of the background shows
        letters = ref[m == 1] == 255  # where the plain tag put white ink, the label is black
        assert (inside[letters] == 0).all() and (inside[~letters] == 255).all()
        assert (img[m == 0] == 100).all()


def test_text_tag_rejects_labels_without_a_tag():
    with pytest.raises(ValueError, match="labels must lie"):
        sc.text_tag(np.zeros((2, 64, 64)), np.array([0, 2]), np.random.default_rng(0))


def test_stripe_width_position_and_brightness():
    rng = np.random.default_rng(0)
    clean = np.zeros((60, 64, 64), np.float32)
    labels = np.arange(60) % 2
    out, mask = sc.stripe(clean, labels, rng)
    sides = set()
    for img, m, y in zip(out, mask, labels):
        cols = np.flatnonzero(m.any(0))
        assert len(cols) == 6 and cols.max() - cols.min() == 5
        assert m[:, cols].all()  # full height
        assert cols.min() <= 15 or cols.max() >= 64 - 1 - 15
        sides.add(cols.min() <= 15)
        np.testing.assert_array_equal(img[m == 1], 255 - 127 * y)
    assert sides == {True, False}
    out5, mask5 = sc.stripe(clean[:5], np.arange(5), rng, step=51)
    assert sorted(np.unique(out5[mask5 == 1])) == [51, 102, 153, 204, 255]


def test_assignments():
    rng = np.random.default_rng(0)
    y = np.arange(100) % 10
    perm = sc.assign(y, "permuted", rng)
    assert sorted(perm) == sorted(y) and (perm != y).mean() > 0.5
    np.testing.assert_array_equal(sc.assign(np.array([0, 1, 1]), "swapped", rng), [1, 0, 0])
    np.testing.assert_array_equal(sc.assign(y, "label", rng), y)
    with pytest.raises(ValueError, match="binary"):
        sc.assign(y, "swapped", rng)
    with pytest.raises(ValueError, match="unknown assignment"):
        sc.assign(y, "shuffle", rng)


def test_bad_image_shapes_raise():
    with pytest.raises(ValueError, match="N x H x W"):
        sc.corner_patch(np.zeros((28, 28)), np.zeros(1), np.random.default_rng(0))
    with pytest.raises(ValueError, match="labels must have shape"):
        sc.corner_patch(np.zeros((3, 28, 28)), np.zeros(2), np.random.default_rng(0))

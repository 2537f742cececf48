#!/usr/bin/env python3
"""Writes the numpy-made fixtures that tests/unit/tensor_io_test.cpp reads.

The files are committed, so the tests need no numpy. To regenerate, with the Python environment
that scripts/setup.sh makes:

    .deps/python/bin/python tests/data/npy/make_fixtures.py

Every numeric fixture holds np.arange(6).reshape(2, 3) in its dtype unless said otherwise, so
the test can check values without a table.
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def six(dtype):
    return np.arange(6).reshape(2, 3).astype(dtype)


def main():
    # One file per dtype numpy writes for ortkit's DataTypes, with numpy's own descr strings.
    for descr in ["<f2", "<f4", "<f8", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8"]:
        np.save(path("dtype_" + descr[1:] + ".npy"), six(descr))
    np.save(path("dtype_b1.npy"), np.array([[True, False, True], [False, True, False]]))

    # Header versions: np.save picks 1.0; 2.0 and 3.0 must be asked for.
    with open(path("version_2_0.npy"), "wb") as f:
        np.lib.format.write_array(f, six("<i2"), version=(2, 0))
    with open(path("version_3_0.npy"), "wb") as f:
        np.lib.format.write_array(f, six("<f8"), version=(3, 0))

    # Byte order and memory order the reader converts.
    np.save(path("big_endian_f4.npy"), six(">f4"))
    np.save(path("big_endian_i8.npy"), six(">i8"))
    np.save(path("big_endian_f2.npy"), six(">f2"))
    # A (2, 3, 4) array with values 0..23 in C order, written column-major.
    np.save(path("fortran_f8.npy"), np.asfortranarray(np.arange(24, dtype="<f8").reshape(2, 3, 4)))
    np.save(path("fortran_big_endian_i4.npy"), np.asfortranarray(six(">i4")))

    # Shapes at the edges.
    np.save(path("scalar_0d.npy"), np.array(3.5, dtype="<f4"))
    np.save(path("zero_size.npy"), np.zeros((0, 3), dtype="<i4"))

    # What the reader must refuse, with a message naming what the file holds.
    np.save(path("object.npy"), np.array([1, "a", None], dtype=object), allow_pickle=True)
    np.save(path("unicode.npy"), np.array(["ab", "cde"]))
    np.save(path("complex64.npy"), np.array([1 + 2j, 3 - 4j], dtype="<c8"))
    np.save(path("structured.npy"), np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))

    # Archives: two members, "a" = six('<f4') and "b" = int64 [7, 8, 9].
    members = {"a": six("<f4"), "b": np.array([7, 8, 9], dtype="<i8")}
    np.savez(path("stored.npz"), **members)
    np.savez_compressed(path("compressed.npz"), **members)


if __name__ == "__main__":
    main()

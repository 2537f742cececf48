#!/usr/bin/env python3
"""Zero the CUDA kernels of every GPU architecture but one inside a shared library, so that it compresses small.

A CUDA library such as ONNX Runtime's CUDA provider carries one machine-code copy of every kernel per GPU
architecture (sm_75, sm_80, ... sm_120) in its .nv_fatbin section. A machine with one GPU model loads only
the copy for its architecture. This keeps that copy, fills the others' bytes with zeros (their headers stay,
so every offset into the section is unchanged) and writes the result, which then compresses to a fraction.

    scripts/trim_cuda_kernels.py IN.so OUT.so --arch 90     keep sm_90 (H100, H200) only

The file layout follows NVIDIA's fat binary container: a header with magic 0xBA55ED50, then entries that each
start with their kind, header size, payload size and, at byte 28, the architecture (e.g. 90 for sm_90).
Exit status: 0 written, 1 the library has no .nv_fatbin or no kernel for that architecture, 2 usage.
"""
import argparse
import struct
import sys

FATBIN_MAGIC = 0xBA55ED50


def section(data: bytes, wanted: str):
    """(offset, size) of the named section of a 64-bit little-endian ELF file, or None."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        name, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        return name, offset, size
    _, names_offset, _ = header(shstrndx)
    for i in range(shnum):
        name, offset, size = header(i)
        end = data.index(b"\0", names_offset + name)
        if data[names_offset + name:end].decode() == wanted:
            return offset, size
    return None


def trim(data: bytearray, offset: int, size: int, arch: int):
    """Zeroes the payloads of the entries for other architectures; returns bytes kept and zeroed per arch."""
    kept, zeroed = {}, {}
    pos, end = offset, offset + size
    while pos + 16 <= end:
        magic, _, header_size, fat_size = struct.unpack_from("<IHHQ", data, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # fat binaries are 8-byte aligned, with padding between them
            continue
        entry, fat_end = pos + header_size, pos + header_size + fat_size
        while entry < fat_end:
            _, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            entry_arch, = struct.unpack_from("<I", data, entry + 28)
            start = entry + entry_header
            if entry_arch == arch:
                kept[entry_arch] = kept.get(entry_arch, 0) + payload
            else:
                data[start:start + payload] = bytes(payload)
                zeroed[entry_arch] = zeroed.get(entry_arch, 0) + payload
            entry = start + payload
        pos = fat_end
    return kept, zeroed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--arch", type=int, required=True, help="the architecture to keep, e.g. 90 for sm_90")
    args = parser.parse_args()
    try:
        data = bytearray(open(args.input, "rb").read())
        found = section(data, ".nv_fatbin")
    except (OSError, ValueError, struct.error) as e:
        print(f"{args.input}: cannot read it as a shared library: {e}", file=sys.stderr)
        return 1
    if found is None:
        print(f"{args.input}: no .nv_fatbin section: not a CUDA library", file=sys.stderr)
        return 1
    kept, zeroed = trim(data, *found, args.arch)
    if not kept:
        archs = ", ".join(f"sm_{a}" for a in sorted(zeroed))
        print(f"{args.input}: no kernels for sm_{args.arch}; it has {archs}", file=sys.stderr)
        return 1
    open(args.output, "wb").write(data)
    mib = 1 << 20
    print(f"kept sm_{args.arch} ({sum(kept.values()) / mib:.0f} MiB), zeroed "
          + ", ".join(f"sm_{a} ({b / mib:.0f} MiB)" for a, b in sorted(zeroed.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: fuzz/corpus/<target>/.

A fuzzer starts from seeds and mutates them. Good seeds are small, and cover the format's
main shapes, valid and broken, so the fuzzer does not have to discover the magic numbers
and the layout by chance. Each file here is a few bytes to a few KB (the whole corpus is
well under 200 KB) and its name says what it is. Re-running the script rewrites the same
bytes (everything is derived from fixed seeds); docs/fuzzing.md explains the targets.

    /usr/bin/python3 fuzz/make_corpus.py            # needs Pillow for the JPEG seeds

Formats: datasets/idx.h (IDX), datasets/gzip_reader.h (gzip), datasets/cifar10.h (CIFAR-10
binary batches), docs/weights_format.md (weights files), datasets/jpeg_image.h (JPEG).
"""
import gzip
import io
import os
import random
import shutil
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def write(target, name, data):
    path = os.path.join(CORPUS, target, name)
    with open(path, "wb") as f:
        f.write(data)


def fresh_dir(target):
    path = os.path.join(CORPUS, target)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)


def gz(data):
    # mtime=0 so the bytes do not depend on when the script ran.
    return gzip.compress(data, compresslevel=9, mtime=0)


# ---- IDX: 0, 0, type, ndims, then big-endian uint32 sizes, then the bytes ---------------------
def idx(dims, data, type_code=0x08):
    return bytes([0, 0, type_code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + data


def make_idx(rng):
    fresh_dir("idx")
    labels = bytes(range(10))
    images = bytes(rng.randrange(256) for _ in range(2 * 4 * 4))
    write("idx", "valid_labels_10.idx", idx([10], labels))
    write("idx", "valid_images_2x4x4.idx", idx([2, 4, 4], images))
    write("idx", "valid_images_2x4x4.idx.gz", gz(idx([2, 4, 4], images)))
    write("idx", "valid_4d_1x2x2x2.idx", idx([1, 2, 2, 2], images[:8]))
    write("idx", "valid_zero_dim_0x5.idx", idx([0, 5], b""))
    write("idx", "empty.idx", b"")
    write("idx", "truncated_magic.idx", b"\x00\x00\x08")
    write("idx", "truncated_dims.idx", idx([2, 4, 4], b"")[:9])
    write("idx", "truncated_data.idx", idx([2, 4, 4], images[:20]))
    write("idx", "trailing_bytes.idx", idx([10], labels + b"\x07\x07"))
    write("idx", "float32_type.idx", idx([2], struct.pack(">2f", 1.5, -2.0), type_code=0x0D))
    write("idx", "too_many_dims.idx", idx([1, 1, 1, 1, 1], b"\x01"))
    write("idx", "huge_dims_small_file.idx", idx([0xFFFFFFFF, 0xFFFFFFFF], b"\x01\x02"))
    packed = gz(idx([2, 4, 4], images))
    write("idx", "truncated_gzip.idx.gz", packed[: len(packed) // 2])
    # A gzip stream whose data says more bytes follow than the header holds: sizes that only
    # show after decompression.
    write("idx", "gzip_lying_header.idx.gz", gz(idx([1000], bytes(10))))


# ---- gzip files (RFC 1952) for fuzz_gzip: each seed is read both as a gzip file and as data --
def gzip_member(data, flags=0, extra=b"", name=b"", comment=b""):
    """One member written by hand, so that the optional header fields appear: FEXTRA (4),
    FNAME (8), FCOMMENT (16) and the header's own CRC-16, FHCRC (2)."""
    header = bytearray(b"\x1f\x8b\x08" + bytes([flags]) + bytes(4) + b"\x00\x03")
    if flags & 4:
        header += struct.pack("<H", len(extra)) + extra
    if flags & 8:
        header += name + b"\x00"
    if flags & 16:
        header += comment + b"\x00"
    if flags & 2:
        header += struct.pack("<H", zlib.crc32(bytes(header)) & 0xFFFF)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: the member adds the rest
    body = deflate.compress(data) + deflate.flush()
    return bytes(header) + body + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data))


def make_gzip():
    fresh_dir("gzip")
    rng = random.Random(24)  # its own generator: the other targets' seeds stay as they were
    text = b"IDX files: the format MNIST and Fashion-MNIST ship in, gzipped.\n" * 3
    labels = idx([10], bytes(range(10)))
    noise = bytes(rng.randrange(256) for _ in range(300))
    packed = gz(text)
    write("gzip", "valid_text.gz", packed)
    write("gzip", "valid_idx_labels.gz", gz(labels))
    write("gzip", "valid_empty.gz", gz(b""))
    write("gzip", "valid_noise_stored_level0.gz", gzip.compress(noise, compresslevel=0, mtime=0))
    write("gzip", "valid_header_fields.gz",
          gzip_member(text[:40], flags=2 | 4 | 8 | 16, extra=b"ab\x02\x00xy", name=b"labels.idx",
                      comment=b"seed"))
    write("gzip", "valid_zeros_64k.gz", gz(bytes(1 << 16)))
    write("gzip", "two_members.gz", gz(text[:50]) + gz(labels))
    write("gzip", "bad_crc.gz", packed[:-8] + bytes([packed[-8] ^ 1]) + packed[-7:])
    write("gzip", "bad_length.gz", packed[:-4] + bytes([packed[-4] ^ 1]) + packed[-3:])
    write("gzip", "trailing_garbage.gz", packed + b"junk")
    write("gzip", "trailing_half_signature.gz", packed + b"\x1f")
    write("gzip", "truncated_half.gz", packed[: len(packed) // 2])
    write("gzip", "truncated_trailer.gz", packed[:-4])
    write("gzip", "header_only.gz", packed[:10])
    write("gzip", "corrupt_deflate.gz", packed[:12] + bytes(b ^ 0xA7 for b in packed[12:-8]) + packed[-8:])
    write("gzip", "not_gzip_noise.bin", noise[:64])


# ---- CIFAR-10: records of 1 label byte + 3,072 pixel bytes (R plane, G plane, B plane) ------
RECORD = 1 + 32 * 32 * 3


def cifar_record(rng, label):
    # A smooth image rather than noise, so the three planes differ in a recognisable way.
    planes = bytearray()
    for c in range(3):
        base = rng.randrange(256)
        planes += bytes((base + 3 * y + 5 * x * (c + 1)) % 256 for y in range(32) for x in range(32))
    return bytes([label]) + bytes(planes)


def make_cifar10(rng):
    fresh_dir("cifar10")
    one = cifar_record(rng, 3)
    two = cifar_record(rng, 9)
    write("cifar10", "valid_1_record.bin", one)
    write("cifar10", "valid_2_records.bin", one + two)
    write("cifar10", "empty.bin", b"")
    write("cifar10", "truncated_record.bin", one[:-1])
    write("cifar10", "one_byte_over.bin", one + b"\x00")
    write("cifar10", "bad_label_10.bin", bytes([10]) + one[1:])
    write("cifar10", "bad_label_255.bin", bytes([255]) + two[1:])


# ---- weights files (docs/weights_format.md), for the fuzz_weights model --------------------
# fuzz_weights.cpp builds Flatten -> Dense(4) for a 2x2 input: parameters dense/kernel (4, 4)
# and dense/bias (4), in that order.
def weights_file(tensors, version=1, count=None, magic=b"ENGWGHTS", crc=None, trailing=b""):
    body = bytearray(magic)
    body += struct.pack("<II", version, len(tensors) if count is None else count)
    for name, shape, values in tensors:
        body += struct.pack("<I", len(name)) + name
        body += struct.pack("<I", len(shape)) + b"".join(struct.pack("<q", d) for d in shape)
        body += struct.pack("<%df" % len(values), *values)
    body += trailing
    checksum = zlib.crc32(bytes(body)) & 0xFFFFFFFF if crc is None else crc
    return bytes(body) + struct.pack("<I", checksum)


def make_weights(rng):
    fresh_dir("weights")
    kernel = [round(rng.uniform(-1, 1), 3) for _ in range(16)]
    bias = [0.0, 0.5, -0.25, 1.0]
    good = [(b"dense/kernel", [4, 4], kernel), (b"dense/bias", [4], bias)]
    valid = weights_file(good)
    write("weights", "valid.weights", valid)
    write("weights", "empty.weights", b"")
    write("weights", "bad_magic.weights", weights_file(good, magic=b"ENGWGHTZ"))
    write("weights", "newer_version_2.weights", weights_file(good, version=2))
    write("weights", "version_0.weights", weights_file(good, version=0))
    write("weights", "bad_crc.weights", valid[:-1] + bytes([valid[-1] ^ 0x5A]))
    write("weights", "truncated_in_record.weights", valid[: len(valid) // 2])
    write("weights", "too_short_for_header.weights", valid[:15])
    write("weights", "tensor_count_3.weights", weights_file(good, count=3))
    write("weights", "wrong_shape_2x8.weights",
          weights_file([(b"dense/kernel", [2, 8], kernel), (b"dense/bias", [4], bias)]))
    write("weights", "wrong_name.weights",
          weights_file([(b"dense_1/kernel", [4, 4], kernel), (b"dense/bias", [4], bias)]))
    write("weights", "wrong_rank_9.weights",
          weights_file([(b"dense/kernel", [1] * 7 + [4, 4], kernel), (b"dense/bias", [4], bias)]))
    write("weights", "negative_extent.weights",
          weights_file([(b"dense/kernel", [-4, -4], kernel), (b"dense/bias", [4], bias)]))
    write("weights", "trailing_bytes.weights", weights_file(good, trailing=b"\x00" * 6))
    # A name length far past the end of the file, with a correct checksum.
    huge_name = bytearray(weights_file(good))
    struct.pack_into("<I", huge_name, 16, 4095)
    write("weights", "name_length_past_end.weights",
          bytes(huge_name[:-4]) + struct.pack("<I", zlib.crc32(bytes(huge_name[:-4])) & 0xFFFFFFFF))


# ---- JPEG (Pillow) --------------------------------------------------------------------------
def jpeg_segments(data):
    """Yields (offset, marker, length) of each header segment, up to the start of scan."""
    pos = 2  # after FF D8
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        length = struct.unpack(">H", data[pos + 2 : pos + 4])[0]
        yield pos, marker, length
        if marker == 0xDA:  # start of scan: entropy-coded data follows
            return
        pos += 2 + length


def with_size(data, height, width):
    """The same JPEG with its frame header (SOF0/SOF2) claiming another height and width."""
    out = bytearray(data)
    for pos, marker, _ in jpeg_segments(data):
        if marker in (0xC0, 0xC1, 0xC2):
            struct.pack_into(">HH", out, pos + 5, height, width)  # after length and precision
            return bytes(out)
    raise ValueError("no SOF marker")


def make_jpeg(rng):
    try:
        from PIL import Image
    except ImportError:
        sys.exit("make_corpus.py: the JPEG seeds need Pillow (Debian: python3-pil)")
    fresh_dir("jpeg")

    def picture(mode, width, height):
        # A gradient with some noise: real-looking frequencies, compresses to a few hundred bytes.
        img = Image.new("RGB", (width, height))
        img.putdata([((13 * x + rng.randrange(16)) % 256, (17 * y) % 256, (5 * (x + y)) % 256)
                     for y in range(height) for x in range(width)])
        return img.convert(mode)

    def encode(img, **options):
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=options.pop("quality", 75), **options)
        return buf.getvalue()

    rgb = encode(picture("RGB", 16, 12))
    write("jpeg", "rgb_16x12_420.jpg", rgb)
    write("jpeg", "rgb_13x9_444.jpg", encode(picture("RGB", 13, 9), subsampling=0))
    write("jpeg", "rgb_40x30_progressive.jpg",
          encode(picture("RGB", 40, 30), progressive=True, optimize=True))
    write("jpeg", "gray_9x14.jpg", encode(picture("L", 9, 14)))
    write("jpeg", "cmyk_8x8_adobe.jpg", encode(picture("CMYK", 8, 8)))
    write("jpeg", "rgb_1x1.jpg", encode(picture("RGB", 1, 1)))
    write("jpeg", "rgb_70x50_for_dct_scaling.jpg", encode(picture("RGB", 70, 50), quality=30))
    write("jpeg", "truncated_half.jpg", rgb[: len(rgb) // 2])
    write("jpeg", "truncated_header.jpg", rgb[:40])
    write("jpeg", "no_end_marker.jpg", rgb[:-2])
    write("jpeg", "claims_20000x20000.jpg", with_size(rgb, 20000, 20000))
    write("jpeg", "claims_0x16.jpg", with_size(rgb, 0, 16))
    write("jpeg", "soi_only.jpg", b"\xff\xd8")
    write("jpeg", "png_signature.jpg", b"\x89PNG\r\n\x1a\n" + bytes(24))
    write("jpeg", "html_page.jpg", b"<!DOCTYPE html><html><body>Not found</body></html>\n")


def main():
    rng = random.Random(9)  # issue 9; any fixed seed makes the files reproducible
    make_idx(rng)
    make_cifar10(rng)
    make_weights(rng)
    make_jpeg(rng)
    make_gzip()
    total = 0
    for root, _, files in os.walk(CORPUS):
        for name in files:
            total += os.path.getsize(os.path.join(root, name))
    print(f"make_corpus.py: wrote {CORPUS} ({total} bytes)")


if __name__ == "__main__":
    main()

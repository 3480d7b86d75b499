#!/usr/bin/env python3
# Writes the media fixtures of Tests/TelegramMediaTests (and copies them as seeds of Fuzz/seeds/FuzzMediaInfo/):
# small MP4 and QuickTime files built box by box after ISO/IEC 14496-12, and JPEG and PNG images encoded here
# (no ffmpeg or imaging library on the machine that made them). The expected values are in MANIFEST.json, written
# from the same numbers the files are built from. Deterministic: rerunning writes the same bytes.
import json, os, shutil, struct, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "Fuzz", "seeds", "FuzzMediaInfo")

def box(kind, *parts, large=False, to_end=False):
    body = b"".join(parts)
    if to_end: return struct.pack(">I", 0) + kind + body
    if large: return struct.pack(">I", 1) + kind + struct.pack(">Q", 16 + len(body)) + body
    return struct.pack(">I", 8 + len(body)) + kind + body

def full(kind, version, *parts, **kw):
    return box(kind, bytes([version, 0, 0, 0]), *parts, **kw)

IDENTITY = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
TURNED_90 = struct.pack(">9I", 0, 0x10000, 0, 0xFFFF0000, 0, 0, 0, 0, 0x40000000)

def mvhd(version, timescale, duration):
    if version == 0: times = struct.pack(">IIII", 0, 0, timescale, duration)
    else: times = struct.pack(">QQIQ", 0, 0, timescale, duration)
    return full(b"mvhd", version, times, struct.pack(">IH10x", 0x10000, 0x100), IDENTITY, bytes(24),
                struct.pack(">I", 3))

def tkhd(version, track, width, height, matrix=IDENTITY):
    if version == 0: ids = struct.pack(">IIIII", 0, 0, track, 0, 0)
    else: ids = struct.pack(">QQIIQ", 0, 0, track, 0, 0)
    return full(b"tkhd", version, ids, bytes(8), struct.pack(">hhHH", 0, 0, 0, 0), matrix,
                struct.pack(">II", width << 16, height << 16))

def hdlr(handler):
    return full(b"hdlr", 0, struct.pack(">I", 0), handler, bytes(12), b"handler\0")

def stbl(entry):
    return box(b"stbl", full(b"stsd", 0, struct.pack(">I", 1), entry),
               full(b"stts", 0, struct.pack(">I", 0)), full(b"stsc", 0, struct.pack(">I", 0)),
               full(b"stsz", 0, struct.pack(">II", 0, 0)), full(b"stco", 0, struct.pack(">I", 0)))

def avc1(width, height):
    return box(b"avc1", bytes(6), struct.pack(">H", 1), bytes(16), struct.pack(">HH", width, height),
               struct.pack(">IIIH", 0x480000, 0x480000, 0, 1), bytes(32), struct.pack(">Hh", 0x18, -1),
               box(b"avcC", bytes([1, 0x42, 0xc0, 0x1e, 0xff, 0xe0, 0])))

def mp4a():
    return box(b"mp4a", bytes(6), struct.pack(">H", 1), bytes(8), struct.pack(">HHHHI", 2, 16, 0, 0, 44100 << 16))

def video_trak(version, track, tk_size, entry_size, matrix=IDENTITY):
    return box(b"trak", tkhd(version, track, *tk_size, matrix=matrix),
               box(b"mdia", full(b"mdhd", 0, bytes(20)), hdlr(b"vide"),
                   box(b"minf", full(b"vmhd", 0, bytes(8)), stbl(avc1(*entry_size)))))

def audio_trak(track):
    return box(b"trak", tkhd(0, track, 0, 0),
               box(b"mdia", full(b"mdhd", 0, bytes(20)), hdlr(b"soun"),
                   box(b"minf", full(b"smhd", 0, bytes(4)), stbl(mp4a()))))

MEDIA = bytes(range(256)) * 4

def videos():
    # Moov first, an audio track before the video one.
    yield "faststart.mp4", box(b"ftyp", b"isom", struct.pack(">I", 0x200), b"isomiso2avc1mp41") + \
        box(b"moov", mvhd(0, 1000, 5005), audio_trak(1), video_trak(0, 2, (640, 360), (640, 360))) + \
        box(b"mdat", MEDIA), {"duration": 5.005, "width": 640, "height": 360, "supportsStreaming": True}
    # QuickTime: media data first in a box with a 64-bit size, then the movie; version-1 headers and a track
    # turned by 90° (a phone held upright), so the displayed size is the coded one swapped.
    yield "moov-at-end.mov", box(b"ftyp", b"qt  ", struct.pack(">I", 0x200), b"qt  ") + box(b"wide") + \
        box(b"mdat", MEDIA, large=True) + \
        box(b"moov", mvhd(1, 600, 1234), video_trak(1, 1, (1920, 1080), (1920, 1080), TURNED_90)), \
        {"duration": 1234 / 600, "width": 1080, "height": 1920, "supportsStreaming": False}
    # tkhd's size left 0: the sample entry's is used; the last box's size is 0 (it runs to the file's end).
    yield "sample-entry-size.mp4", box(b"ftyp", b"mp42", struct.pack(">I", 0), b"mp42isom") + \
        box(b"moov", mvhd(0, 90000, 90000 * 3), video_trak(0, 1, (0, 0), (320, 240))) + \
        box(b"free", bytes(5)) + box(b"mdat", MEDIA, to_end=True), \
        {"duration": 3.0, "width": 320, "height": 240, "supportsStreaming": True}

def segment(marker, body): return bytes([0xff, marker]) + struct.pack(">H", 2 + len(body)) + body

def jpeg(width, height, frame_marker=0xc0, extra=b""):
    # Grey, one component, every 8×8 block flat at level 128: each block is DC difference 0 then end-of-block,
    # and with one-code Huffman tables (a single 1-bit code "0" in each) that is two bits a block.
    blocks = ((width + 7) // 8) * ((height + 7) // 8)
    bits = "00" * blocks
    bits += "1" * (-len(bits) % 8)
    scan = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8)).replace(b"\xff", b"\xff\x00")
    table = bytes([1] + [0] * 15) + b"\x00"
    return b"\xff\xd8" + segment(0xe0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0") + extra + \
        segment(0xdb, b"\x00" + bytes([1] * 64)) + \
        segment(frame_marker, struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00") + \
        segment(0xc4, b"\x00" + table) + segment(0xc4, b"\x10" + table) + \
        segment(0xda, b"\x01\x01\x00\x00\x3f\x00") + scan + b"\xff\xd9"

def png(width, height):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    rows = b"".join(b"\0" + bytes(v for x in range(width) for v in (x * 40 % 256, y * 50 % 256, 128))
                    for y in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")

def images():
    yield "baseline.jpg", jpeg(16, 8), {"format": "jpeg", "width": 16, "height": 8}
    # Extended sequential (SOF1) after an Exif segment, a comment and fill bytes before the frame header.
    exif = segment(0xe1, b"Exif\0\0" + bytes(300)) + segment(0xfe, b"made by make-media.py") + b"\xff\xff"
    yield "extended-exif.jpg", jpeg(33, 17, 0xc1, exif), {"format": "jpeg", "width": 33, "height": 17}
    yield "rgb.png", png(7, 5), {"format": "png", "width": 7, "height": 5}

def main():
    manifest = {"videos": {}, "images": {}}
    if os.path.isdir(SEEDS): shutil.rmtree(SEEDS)
    os.makedirs(SEEDS)
    for group, items in (("videos", videos()), ("images", images())):
        for name, data, expected in items:
            with open(os.path.join(HERE, name), "wb") as f: f.write(data)
            with open(os.path.join(SEEDS, name), "wb") as f: f.write(data)
            manifest[group][name] = expected
    with open(os.path.join(HERE, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")

main()

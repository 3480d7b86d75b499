#!/usr/bin/env python3
# Writes stripped-vectors.json: stripped thumbnails (the bytes of a photoStrippedSize) and the JPEG Telethon's
# telethon.utils.stripped_photo_to_jpg makes of each, for Tests/TelegramMediaTests (StrippedThumbnailTests).
#   .venv-interop/bin/python Fixtures/media/make-stripped-vectors.py
# Seeded (deterministic for a Telethon version). The scan bytes are random, not a real image's: the conversion
# only puts a fixed header and the end marker around them, so any bytes test it.
import json, os, random
import telethon
from telethon.utils import stripped_photo_to_jpg

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(52)
cases = [(40, 40, 0), (1, 1, 1), (255, 255, 640), (40, 30, 1)]
cases += [(rng.randint(1, 255), rng.randint(1, 255), rng.randint(0, 600)) for _ in range(16)]
vectors = []
for height, width, length in cases:
    stripped = bytes([1, height, width]) + bytes(rng.randrange(256) for _ in range(length))
    vectors.append({"stripped": stripped.hex(), "jpeg": stripped_photo_to_jpg(stripped).hex()})
with open(os.path.join(HERE, "stripped-vectors.json"), "w") as f:
    json.dump({"telethon": telethon.__version__, "vectors": vectors}, f, indent=0)
    f.write("\n")
print(len(vectors), "vectors, Telethon", telethon.__version__)

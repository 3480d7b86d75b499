#!/usr/bin/env python3
"""Writes qr_vectors.json: QR codes (byte mode, error correction M, minimal version, each of the eight masks) made by
python-qrcode 8.2, an independent encoder, for texts like QR-login URLs. Rows are strings of '1' (dark) and '0'
(light), without the quiet zone.

Run: .venv-interop/bin/pip install qrcode==8.2
     .venv-interop/bin/python Fixtures/qr/make_qr_vectors.py > Fixtures/qr/qr_vectors.json
"""
import base64
import hashlib
import json
import sys

import qrcode
from qrcode.util import MODE_8BIT_BYTE, QRData


def code(text, mask):
    qr = qrcode.QRCode(version=None, error_correction=qrcode.constants.ERROR_CORRECT_M, mask_pattern=mask, border=0)
    qr.add_data(QRData(text.encode(), mode=MODE_8BIT_BYTE))
    qr.make(fit=True)
    return qr.version, ["".join("1" if module else "0" for module in row) for row in qr.get_matrix()]


def main():
    token = base64.urlsafe_b64encode(hashlib.sha256(b"login token").digest()).decode().rstrip("=")
    texts = ["tg://login?token=" + token, "tg://login?token=AQID", "hello", "x" * 106]
    vectors = []
    for text in texts:
        for mask in range(8):
            version, rows = code(text, mask)
            vectors.append({"text": text, "mask": mask, "version": version, "rows": rows})
    json.dump({"about": "QR codes by python-qrcode 8.2; made by Fixtures/qr/make_qr_vectors.py", "vectors": vectors},
              sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

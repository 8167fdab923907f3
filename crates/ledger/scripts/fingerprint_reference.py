"""Independent reference values for dpinfer-ledger's fingerprint (tests in src/fingerprint.rs).

Builds the framed byte stream of the module docs by hand and hashes it with python-xxhash
(the xxHash C library's own XXH3-128). Run:

    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install xxhash
    /tmp/peers/bin/python crates/ledger/scripts/fingerprint_reference.py
"""

import json
import struct

import xxhash


def fingerprint(pairs, observed, settings):
    s = json.dumps(settings, separators=(",", ":")).encode()
    b = b"dpinfer-fingerprint-v2\0"
    for part in (pairs, observed):
        b += struct.pack("<Q", len(part)) + b"".join(struct.pack("<d", v) for v in part)
    b += struct.pack("<Q", len(s)) + s
    return "xxh3-128:%032x" % xxhash.xxh3_128_intdigest(b)


print("xxhash", xxhash.VERSION, "library", xxhash.XXHASH_VERSION)
print("empty input:", "0x%032x" % xxhash.xxh3_128_intdigest(b""))
print('([1, 2, 3], [0.5], ["svt-abc", 1.0]):', fingerprint([1.0, 2.0, 3.0], [0.5], ["svt-abc", 1.0]))
big = [i * 0.25 - 3.0 for i in range(10000)]
print("(i/4 - 3 for i < 10000, [1, -0], \"x\"):", fingerprint(big, [1.0, -0.0], "x"))

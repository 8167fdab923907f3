#!/usr/bin/env python3
"""Independent known answers for dpinfer_simulators::SimStream (pure Python).

SimStream(run_seed, domain, job): ChaCha with 8 rounds, key = run_seed (8 bytes LE) ||
domain (8 bytes LE) || b"dpinfer-sim-v1\0\0", 64-bit block counter in words 12-13 (starting at
0), 64-bit stream id = job in words 14-15 (D. J. Bernstein's original layout); its first four
64-bit outputs (two consecutive words each, low word first) are the state of a Xoshiro256++
generator (Blackman & Vigna), whose outputs are the stream.
Run: python3 stream_kat.py > stream_kat.txt   (columns: seed domain job then 40 outputs)
"""
import struct

MASK = 0xFFFFFFFF

def rotl(x, n):
    return ((x << n) | (x >> (32 - n))) & MASK

def qr(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK; s[d] = rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK; s[b] = rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK; s[d] = rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK; s[b] = rotl(s[b] ^ s[c], 7)

def block(key_words, counter, stream, rounds=8):
    init = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574] + key_words + [
        counter & MASK, counter >> 32, stream & MASK, stream >> 32]
    s = list(init)
    for _ in range(rounds // 2):
        qr(s, 0, 4, 8, 12); qr(s, 1, 5, 9, 13); qr(s, 2, 6, 10, 14); qr(s, 3, 7, 11, 15)
        qr(s, 0, 5, 10, 15); qr(s, 1, 6, 11, 12); qr(s, 2, 7, 8, 13); qr(s, 3, 4, 9, 14)
    return [(x + y) & MASK for x, y in zip(s, init)]

def u64s(seed, domain, job, count):
    key = struct.pack('<QQ', seed, domain) + b'dpinfer-sim-v1\x00\x00'
    kw = list(struct.unpack('<8I', key))
    words = []
    ctr = 0
    while len(words) < 2 * count:
        words += block(kw, ctr, job)
        ctr += 1
    return [words[2 * i] | (words[2 * i + 1] << 32) for i in range(count)]

M64 = 2**64 - 1

def rotl64(x, k):
    return ((x << k) | (x >> (64 - k))) & M64

def xoshiro256pp(s, count):
    s = list(s)
    out = []
    for _ in range(count):
        out.append((rotl64((s[0] + s[3]) & M64, 23) + s[0]) & M64)
        t = (s[1] << 17) & M64
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t
        s[3] = rotl64(s[3], 45)
    return out

if __name__ == '__main__':
    for seed, domain, job in [(0, 0, 0), (42, 0, 7), (2**64 - 1, 3, 2**63 + 5)]:
        vals = xoshiro256pp(u64s(seed, domain, job, 4), 40)
        print(f"{seed} {domain} {job} " + " ".join(str(v) for v in vals))

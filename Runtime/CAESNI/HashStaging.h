// The layout of the one-pass loops' hash input, shared by AESNIIGE.c and ARMv8IGE.c: each includes it after
// defining SHA_INLINE, `sha_state`, `sha_block`, `sha_digest`, `wipe` and `copy_bytes` for its architecture.
#ifndef CAESNI_HASH_STAGING_H
#define CAESNI_HASH_STAGING_H

/// The hash input is `prefix ‖ source`, the prefix at most 64 bytes: its first block, which mixes the two, is laid
/// out in `staging`; the others are read where they lie in `source`.
SHA_INLINE void stage_first_block(uint8_t *staging, const uint8_t *prefix, size_t prefix_length,
                                  const uint8_t *source, size_t source_length) {
    size_t taken = source_length < 64 - prefix_length ? source_length : 64 - prefix_length;
    copy_bytes(staging, prefix, prefix_length);
    copy_bytes(staging + prefix_length, source, taken);
}

/// Hash block `index` of `prefix ‖ source` (see `stage_first_block`).
SHA_INLINE const uint8_t *hash_block(const uint8_t *staging, const uint8_t *source, size_t prefix_length,
                                     size_t index) {
    return index == 0 ? staging : source + 64 * index - prefix_length;
}

/// The rest of a hash of `prefix ‖ source` (`total` bytes, `hashed` of them compressed, the first block staged):
/// the whole blocks left, then the last bytes with 0x80, zeros and the length in bits (§5.1.1), in one padded
/// block or two.
SHA_INLINE void sha_finish(sha_state *h, uint8_t *staging, const uint8_t *source, size_t prefix_length,
                           size_t hashed, size_t total, uint8_t *digest) {
    for (; total - hashed >= 64; hashed += 64) sha_block(h, hash_block(staging, source, prefix_length, hashed / 64));
    size_t rest = total - hashed;
    if (hashed != 0) copy_bytes(staging, source + (hashed - prefix_length), rest);
    wipe(staging + rest, 128 - rest);  // the padding's zeros
    staging[rest] = 0x80;
    size_t blocks = rest + 9 <= 64 ? 1 : 2;
    uint64_t bits = (uint64_t)total * 8;
    for (int i = 0; i < 8; i++) staging[64 * blocks - 1 - i] = (uint8_t)(bits >> (8 * i));
    sha_block(h, staging);
    if (blocks == 2) sha_block(h, staging + 64);
    sha_digest(h, digest);
}

#endif

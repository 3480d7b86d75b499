// The public functions of CAESNI.h over an architecture's loops, shared by AESNIIGE.c and ARMv8IGE.c: each includes
// it after defining `schedule`, `expand_key`, `invert_schedule`, `chain`, `run_fused`, `run_encrypt_hashing`, `wipe`, `burn_stack`, `clear_vector_registers`,
// `caesni_available` and `caesni_sha_available`. Each checks its arguments and the CPU again, so a caller that
// skipped the check gets an error instead of SIGILL, and cleans up after the work.
#ifndef CAESNI_ENTRY_POINTS_H
#define CAESNI_ENTRY_POINTS_H

/// IGE over `length` bytes with the key's schedule, wiped after.
static __attribute__((noinline)) AES_TARGET void run(int decrypt, const uint8_t *key, size_t key_length,
                                                     const uint8_t *iv, const uint8_t *input, uint8_t *output,
                                                     size_t length) {
    schedule s;
    int rounds = expand_key(&s, key, key_length);
    if (decrypt) {
        invert_schedule(&s, rounds);
        if (rounds == 14) chain(&s, 14, 1, iv, input, output, length);
        else chain(&s, 10, 1, iv, input, output, length);
    } else {
        if (rounds == 14) chain(&s, 14, 0, iv, input, output, length);
        else chain(&s, 10, 0, iv, input, output, length);
    }
    wipe(&s, sizeof s);
}

static int process(int decrypt, const uint8_t *key, size_t key_length, const uint8_t *iv,
                   const uint8_t *input, uint8_t *output, size_t length) {
    if (!caesni_available() || (key_length != 16 && key_length != 32) || length % 16 != 0) return -1;
    if (length == 0) return 0;
    run(decrypt, key, key_length, iv, input, output, length);
    burn_stack();
    clear_vector_registers();
    return 0;
}

int caesni_ige_encrypt(const uint8_t *key, size_t key_length, const uint8_t *iv,
                       const uint8_t *input, uint8_t *output, size_t length) {
    return process(0, key, key_length, iv, input, output, length);
}

int caesni_ige_decrypt(const uint8_t *key, size_t key_length, const uint8_t *iv,
                       const uint8_t *input, uint8_t *output, size_t length) {
    return process(1, key, key_length, iv, input, output, length);
}

int caesni_ige_decrypt_sha256(const uint8_t *key, const uint8_t *iv, const uint8_t *prefix, size_t prefix_length,
                              const uint8_t *input, uint8_t *output, size_t length, uint8_t *digest) {
    if (!caesni_sha_available() || prefix_length > 64 || length % 16 != 0) return -1;
    if (!key || !iv || !digest || (prefix_length && !prefix) || (length && (!input || !output))) return -1;
    uint8_t staging[128];
    run_fused(key, iv, prefix, prefix_length, input, output, length, staging, digest);
    wipe(staging, sizeof staging);
    burn_stack();
    clear_vector_registers();
    return 0;
}

int caesni_ige_encrypt_sha256(const uint8_t *key, const uint8_t *iv, const uint8_t *input, uint8_t *output,
                              size_t length, const uint8_t *prefix, size_t prefix_length, const uint8_t *next,
                              size_t next_length, uint8_t *digest) {
    if (!caesni_sha_available() || prefix_length > 64 || length % 16 != 0) return -1;
    if (!key || !iv || !digest || (prefix_length && !prefix) || (length && (!input || !output)) ||
        (next_length && !next)) return -1;
    uint8_t staging[128];
    run_encrypt_hashing(key, iv, input, output, length, prefix, prefix_length, next, next_length, staging, digest);
    wipe(staging, sizeof staging);
    burn_stack();
    clear_vector_registers();
    return 0;
}

#endif

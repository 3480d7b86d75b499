// AES-IGE on the CPU's AES instructions (AES-NI on x86: AESNIIGE.c; the ARMv8 Cryptography Extensions on ARM64:
// ARMv8IGE.c), for MTProtoCrypto. IGE decryption chains AES *decryptions*, which no OpenSSL or swift-crypto mode
// offers, so MTProtoCrypto runs this loop where the CPU has the instructions and its backend's AES elsewhere.
// The functions only compute; MTProtoCrypto validates lengths first and picks the implementation.
#ifndef CAESNI_H
#define CAESNI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this build targets x86 and the CPU reports AES-NI and SSE2 (CPUID leaf 1), or targets ARM64 and the CPU
/// has the AES instructions (always on Apple platforms; getauxval's HWCAP_AES on Linux), else 0.
int caesni_available(void);

/// IGE encryption (c_i = E(p_i ^ c_{i-1}) ^ p_{i-1}) of `length` bytes from `input` to `output`.
/// `key` has `key_length` bytes (16 or 32), `iv` 32 bytes: c_0 then p_0. `output` may be `input` itself but must
/// not otherwise overlap it. Returns 0, or -1 without writing anything when AES-NI is unavailable, `key_length`
/// is not 16 or 32, or `length` is not a multiple of 16.
int caesni_ige_encrypt(const uint8_t *key, size_t key_length, const uint8_t *iv,
                       const uint8_t *input, uint8_t *output, size_t length);

/// IGE decryption (p_i = D(c_i ^ p_{i-1}) ^ c_{i-1}); arguments and results as for `caesni_ige_encrypt`.
int caesni_ige_decrypt(const uint8_t *key, size_t key_length, const uint8_t *iv,
                       const uint8_t *input, uint8_t *output, size_t length);

/// 1 when `caesni_available` and the CPU also reports the SHA extensions, SSSE3 and SSE4.1 (CPUID leaves 7 and 1),
/// or on ARM64 the SHA-2 instructions (HWCAP_SHA2).
int caesni_sha_available(void);

/// IGE decryption with a 32-byte (AES-256) `key`, as `caesni_ige_decrypt`, that also writes SHA-256(`prefix` ‖
/// plaintext) to `digest` (32 bytes) in the same pass: MTProto 2.0's msg_key check at the cost of the decryption
/// alone. `prefix_length` is at most 64. `output` may be `input` itself but must not otherwise overlap it.
/// Returns 0, or -1 without writing anything when `caesni_sha_available` is 0, `prefix_length` is over 64 or
/// `length` is not a multiple of 16.
int caesni_ige_decrypt_sha256(const uint8_t *key, const uint8_t *iv, const uint8_t *prefix, size_t prefix_length,
                              const uint8_t *input, uint8_t *output, size_t length, uint8_t *digest);

/// IGE encryption with a 32-byte (AES-256) `key`, as `caesni_ige_encrypt`, that meanwhile writes SHA-256(`prefix` ‖
/// `next`) to `digest`: MTProto 2.0's sender hashes a message before encrypting it, so with several to send it
/// encrypts one while hashing the next. `next` must not overlap `output`; `prefix_length` is at most 64. Returns 0,
/// or -1 without writing anything as for `caesni_ige_decrypt_sha256`.
int caesni_ige_encrypt_sha256(const uint8_t *key, const uint8_t *iv, const uint8_t *input, uint8_t *output,
                              size_t length, const uint8_t *prefix, size_t prefix_length, const uint8_t *next,
                              size_t next_length, uint8_t *digest);

#ifdef __cplusplus
}
#endif

#endif

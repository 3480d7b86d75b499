// The ARM64 loop (Runtime/CAESNI/ARMv8IGE.c) against known answers: cross-compiled with Debian's aarch64 compiler
// and run under qemu-user by Tests/run, it reads lines on stdin and checks every entry point on each:
//   ige KEY IV PLAINTEXT CIPHERTEXT          encryption and decryption, out of place and in place
//   dsha KEY IV PREFIX CIPHERTEXT PLAINTEXT DIGEST      decryption with SHA-256(prefix ‖ plaintext) in one pass
//   esha KEY IV PLAINTEXT CIPHERTEXT PREFIX NEXT DIGEST encryption with SHA-256(prefix ‖ next) in one pass
// (hex, `-` for empty): the Fixtures/vectors known answers (ige_vectors.py) and OpenSSL's answers on seeded random
// cases (ige_reference.c). Prints a summary and exits 1 on any mismatch or when the loop reports itself unavailable.
//   aarch64-linux-gnu-gcc -O2 -static -I Runtime/CAESNI/include Tests/CAESNIChecks/armv8_check.c -o /tmp/check
//   { python3 Tests/CAESNIChecks/ige_vectors.py; .build/ige_reference 1 2000; } | qemu-aarch64 /tmp/check
#include "../../Runtime/CAESNI/ARMv8IGE.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FIELD = 16384 };

/// Reads one hex field (or `-`) into `out`; returns its byte count, or -1 at the end of the line or input.
static long field(uint8_t *out) {
    static char text[2 * FIELD + 2];
    if (scanf("%32769s", text) != 1) return -1;
    if (strcmp(text, "-") == 0) return 0;
    size_t length = strlen(text) / 2;
    for (size_t i = 0; i < 2 * length; i++) {
        char c = text[i];
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0) return -1;
        out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | digit : digit << 4);
    }
    return (long)length;
}

static uint8_t key[64], iv[64], prefix[128], input[FIELD], expected[FIELD], extra[FIELD], digest[64], out[FIELD];
static int failures, checks;

static void expect(int ok, const char *what, int line) {
    checks++;
    if (!ok) {
        failures++;
        if (failures <= 10) printf("line %d: %s differs\n", line, what);
    }
}

int main(void) {
#if CAESNI_ARM64
    if (!caesni_available() || !caesni_sha_available()) {
        puts("the ARMv8 loop reports no AES or SHA-2 instructions on this CPU");
        return 1;
    }
    char kind[8];
    int line = 0;
    while (scanf("%7s", kind) == 1) {
        line++;
        long key_length = field(key), iv_length = field(iv);
        if (key_length <= 0 || iv_length != 32) { printf("line %d: bad key or IV\n", line); return 1; }
        if (strcmp(kind, "ige") == 0) {
            long n = field(input), m = field(expected);
            if (n != m) { printf("line %d: lengths differ\n", line); return 1; }
            size_t len = (size_t)n;
            memset(out, 0, len);
            expect(caesni_ige_encrypt(key, (size_t)key_length, iv, input, out, len) == 0
                   && memcmp(out, expected, len) == 0, "encryption", line);
            memcpy(out, input, len);
            expect(caesni_ige_encrypt(key, (size_t)key_length, iv, out, out, len) == 0
                   && memcmp(out, expected, len) == 0, "in-place encryption", line);
            expect(caesni_ige_decrypt(key, (size_t)key_length, iv, expected, out, len) == 0
                   && memcmp(out, input, len) == 0, "decryption", line);
            memcpy(out, expected, len);
            expect(caesni_ige_decrypt(key, (size_t)key_length, iv, out, out, len) == 0
                   && memcmp(out, input, len) == 0, "in-place decryption", line);
        } else if (strcmp(kind, "dsha") == 0) {
            long p = field(prefix), n = field(input), m = field(expected);
            uint8_t want[32], got[32];
            if (field(want) != 32 || n != m || p < 0) { printf("line %d: bad dsha fields\n", line); return 1; }
            memcpy(out, input, (size_t)n);
            expect(caesni_ige_decrypt_sha256(key, iv, prefix, (size_t)p, out, out, (size_t)n, got) == 0
                   && memcmp(out, expected, (size_t)n) == 0 && memcmp(got, want, 32) == 0,
                   "one-pass decryption and digest", line);
        } else if (strcmp(kind, "esha") == 0) {
            long n = field(input), m = field(expected), p = field(prefix), q = field(extra);
            uint8_t want[32], got[32];
            if (field(want) != 32 || n != m || p < 0 || q < 0) { printf("line %d: bad esha fields\n", line); return 1; }
            memcpy(out, input, (size_t)n);
            expect(caesni_ige_encrypt_sha256(key, iv, out, out, (size_t)n, prefix, (size_t)p, extra, (size_t)q, got)
                   == 0 && memcmp(out, expected, (size_t)n) == 0 && memcmp(got, want, 32) == 0,
                   "one-pass encryption and digest", line);
        } else {
            printf("line %d: unknown kind %s\n", line, kind);
            return 1;
        }
    }
    // The refusals the x86 loop makes: partial blocks, other key sizes, an over-long prefix.
    expect(caesni_ige_encrypt(key, 32, iv, input, out, 17) == -1, "refusal of a partial block", 0);
    expect(caesni_ige_decrypt(key, 24, iv, input, out, 16) == -1, "refusal of a 24-byte key", 0);
    expect(caesni_ige_decrypt_sha256(key, iv, prefix, 65, input, out, 16, digest) == -1, "refusal of a long prefix", 0);
    printf("ARMv8 IGE: %d lines, %d checks, %d failed\n", line, checks, failures);
    return failures == 0 && line > 0 ? 0 : 1;
#else
    puts("not ARM64");
    return 1;
#endif
}

// Checks that CAESNI leaves no round key behind on the stack: after an encryption and a decryption, the stack below
// the caller is scanned for any derived round key (encryption keys 2...14, decryption keys 1...13; keys 0 and 1 are
// the key bytes themselves, which the caller owns). Not part of `swift test`: it reads stale stack memory on
// purpose, which only a standalone program compiled at a known level can do. Run from the package root, at both
// levels SwiftPM uses (debug -O0, release -O2); it prints the hits and exits 1 if there are any:
//   clang -O0 -I Runtime/CAESNI/include Tests/CAESNIChecks/stack_scan.c -o /tmp/scan && /tmp/scan
//   clang -O2 -I Runtime/CAESNI/include Tests/CAESNIChecks/stack_scan.c -o /tmp/scan && /tmp/scan
// With `burn_stack()` removed from AESNIIGE.c this found 3-19 round keys per call (clang 21).
#include "../../Runtime/CAESNI/AESNIIGE.c"

#include <stdio.h>

#if CAESNI_X86
/// Counts 16-byte windows of the stack below this frame that equal a derived round key.
static __attribute__((noinline)) int scan(const schedule *encrypt, const schedule *decrypt) {
    unsigned char below[16384];    // deliberately uninitialized: it holds what earlier, deeper calls left
    __asm__ __volatile__("" : : "r"(below) : "memory");
    int hits = 0;
    for (size_t offset = 0; offset + 16 <= sizeof below; offset++) {
        for (int k = 2; k < 15; k++) hits += memcmp(below + offset, &encrypt->key[k], 16) == 0;
        for (int k = 1; k < 14; k++) hits += memcmp(below + offset, &decrypt->key[k], 16) == 0;
    }
    return hits;
}

static __attribute__((noinline)) void call(int decrypt, const uint8_t *key, const uint8_t *iv, uint8_t *data) {
    if (decrypt) caesni_ige_decrypt(key, 32, iv, data, data, 4096);
    else caesni_ige_encrypt(key, 32, iv, data, data, 4096);
}

int main(void) {
    if (!caesni_available()) {
        puts("no AES-NI: nothing to check");
        return 0;
    }
    uint8_t key[32], iv[32], data[4096];
    for (int i = 0; i < 32; i++) {
        key[i] = (uint8_t)(3 * i + 1);
        iv[i] = (uint8_t)i;
    }
    memset(data, 5, sizeof data);
    schedule encrypt, decrypt;
    int rounds = expand_key(&encrypt, key, 32);
    decrypt = encrypt;
    invert_schedule(&decrypt, rounds);
    int total = 0;
    for (int direction = 0; direction < 2; direction++) {
        call(direction, key, iv, data);
        int hits = scan(&encrypt, &decrypt);
        printf("after %s: %d round keys found on the stack\n", direction ? "decrypt" : "encrypt", hits);
        total += hits;
    }
    return total == 0 ? 0 : 1;
}
#else
int main(void) {
    puts("not x86: nothing to check");
    return 0;
}
#endif

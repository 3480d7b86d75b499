// Checks that CAESNI leaves no round key behind on the stack (the AES-NI loop on x86, the ARMv8 one on ARM64, which
// Tests/run cross-compiles and runs under qemu-user): after an encryption, a decryption, and each with
// SHA-256 in the same pass, the stack below the caller is scanned for any derived round key (encryption keys 2...14,
// decryption keys 1...13; keys 0 and 1 are the key bytes themselves, which the caller owns), and after the last two
// also for the hash's prefix (in MTProto 2.0, auth-key bytes), which the one-pass loops copy into a staging block. Not part of
// `swift test`: it reads stale stack memory on purpose, which only a standalone program compiled at a known level
// can do. `Tests/run` runs it from the package
// root at both levels SwiftPM uses (debug -O0, release -O2); it prints the hits and exits 1 if there are any:
//   clang -O0 -I Runtime/CAESNI/include Tests/CAESNIChecks/stack_scan.c -o /tmp/scan && /tmp/scan
//   clang -O2 -I Runtime/CAESNI/include Tests/CAESNIChecks/stack_scan.c -o /tmp/scan && /tmp/scan
// With `burn_stack()` emptied in AESNIIGE.c this finds 16-222 round keys per call at -O0 and 2-14 at -O2 (clang 21);
// with the library calling `memset`/`memcpy` as before (lazily bound, so the dynamic linker's resolver saved the
// vector registers holding round keys), 11 per one-pass call at -O2 on an AVX-512 host.
#include "../../Runtime/CAESNI/AESNIIGE.c"
#include "../../Runtime/CAESNI/ARMv8IGE.c"

#include <stdio.h>
#include <string.h>

#if CAESNI_X86 || CAESNI_ARM64
/// Counts 16-byte windows of the stack below this frame that equal a derived round key or a half of `prefix`.
/// The one-pass loop's frame is about 16 KiB at -O0, so the window reaches well past it.
static __attribute__((noinline)) int scan(const schedule *encrypt, const schedule *decrypt, const uint8_t *prefix) {
    unsigned char below[40960];    // deliberately uninitialized: it holds what earlier, deeper calls left
    __asm__ __volatile__("" : : "r"(below) : "memory");
    int hits = 0;
    for (size_t offset = 0; offset + 16 <= sizeof below; offset++) {
        for (int k = 2; k < 15; k++) hits += memcmp(below + offset, &encrypt->key[k], 16) == 0;
        for (int k = 1; k < 14; k++) hits += memcmp(below + offset, &decrypt->key[k], 16) == 0;
        if (prefix) hits += (memcmp(below + offset, prefix, 16) == 0) + (memcmp(below + offset, prefix + 16, 16) == 0);
    }
    clear_vector_registers();  // the comparisons loaded the keys; `printf` may be bound lazily next
    return hits;
}

static __attribute__((noinline)) void call(int mode, const uint8_t *key, const uint8_t *iv, const uint8_t *prefix,
                                           uint8_t *data) {
    uint8_t digest[32], next[1000];
    memset(next, 9, sizeof next);
    if (mode == 3) caesni_ige_encrypt_sha256(key, iv, data, data, 4096, prefix, 32, next, sizeof next, digest);
    else if (mode == 2) caesni_ige_decrypt_sha256(key, iv, prefix, 32, data, data, 4096, digest);
    else if (mode == 1) caesni_ige_decrypt(key, 32, iv, data, data, 4096);
    else caesni_ige_encrypt(key, 32, iv, data, data, 4096);
}

int main(void) {
    if (!caesni_available()) {
        puts("no AES instructions: nothing to check");
        return 0;
    }
    // The key, the prefix and the reference schedules are this program's own secrets. No libc call may follow while
    // they sit in vector registers: the first, lazily bound call of a function saves every register on the stack.
    // (A struct copy of the schedule compiled to `memcpy` and showed up as 1-3 round keys after the first encryption
    // at -O2; the vectorized fill of `prefix` before `memset` as a prefix half.) So `data` is filled first, the
    // registers are cleared after the rest, and what the work left below this frame is burnt.
    uint8_t key[32], iv[32], prefix[32], data[4096];
    memset(data, 5, sizeof data);
    for (int i = 0; i < 32; i++) {
        key[i] = (uint8_t)(3 * i + 1);
        iv[i] = (uint8_t)i;
        prefix[i] = (uint8_t)(7 * i + 200);
    }
    schedule encrypt, decrypt;
    int rounds = expand_key(&encrypt, key, 32);
    expand_key(&decrypt, key, 32);
    invert_schedule(&decrypt, rounds);
    clear_vector_registers();
    burn_stack();
    int total = 0;
    static const char *names[] = {"encrypt", "decrypt", "decrypt with SHA-256", "encrypt with SHA-256"};
    for (int mode = 0; mode < (caesni_sha_available() ? 4 : 2); mode++) {
        call(mode, key, iv, prefix, data);
        int hits = scan(&encrypt, &decrypt, mode >= 2 ? prefix : NULL);
        printf("after %s: %d round keys or prefix halves found on the stack\n", names[mode], hits);
        total += hits;
    }
    return total == 0 ? 0 : 1;
}
#else
int main(void) {
    puts("neither x86 nor ARM64: nothing to check");
    return 0;
}
#endif

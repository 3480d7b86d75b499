// Seeded random AES-IGE cases with OpenSSL's answers, for the ARM64 loop's differential check (armv8_check.c, run
// under qemu-user by Tests/run): OpenSSL's AES_ige_encrypt (the convention MTProto uses: IV = c_0 ‖ p_0) and SHA256.
// Prints `ige`, `dsha` and `esha` lines (see armv8_check.c); the seed is the first argument, so a failure replays.
//   clang -O2 Tests/CAESNIChecks/ige_reference.c -lcrypto -o .build/ige_reference && .build/ige_reference 1 2000
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/aes.h>
#include <openssl/sha.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state;

static uint64_t next_random(void) {  // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void fill(uint8_t *bytes, size_t count) {
    for (size_t i = 0; i < count; i++) bytes[i] = (uint8_t)next_random();
}

static void hex(const uint8_t *bytes, size_t count) {
    putchar(' ');
    if (count == 0) putchar('-');
    for (size_t i = 0; i < count; i++) printf("%02x", bytes[i]);
}

static void ige(const uint8_t *key, size_t key_length, const uint8_t *iv, const uint8_t *in, uint8_t *out,
                size_t length, int encrypt) {
    AES_KEY schedule;
    uint8_t iv_copy[32];
    memcpy(iv_copy, iv, 32);
    if (encrypt) AES_set_encrypt_key(key, (int)key_length * 8, &schedule);
    else AES_set_decrypt_key(key, (int)key_length * 8, &schedule);
    if (length) AES_ige_encrypt(in, out, length, &schedule, iv_copy, encrypt ? AES_ENCRYPT : AES_DECRYPT);
}

int main(int argc, char **argv) {
    state = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    int cases = argc > 2 ? atoi(argv[2]) : 1000;
    static uint8_t key[32], iv[32], prefix[64], a[4096 + 64], b[4096 + 64], next[5000], hashed[64 + 5000];
    uint8_t digest[32];
    for (int c = 0; c < cases; c++) {
        size_t key_length = next_random() % 2 ? 32 : 16;
        size_t length = 16 * (size_t)(next_random() % 260);       // 0...4144 bytes: past several 64-byte chunks
        fill(key, key_length);
        fill(iv, 32);
        fill(a, length);
        int kind = (int)(next_random() % 3);
        if (kind == 0) {                                            // both directions, any key size
            ige(key, key_length, iv, a, b, length, 1);
            printf("ige"); hex(key, key_length); hex(iv, 32); hex(a, length); hex(b, length); putchar('\n');
            continue;
        }
        size_t prefix_length = (size_t)(next_random() % 65);
        fill(prefix, prefix_length);
        if (kind == 1) {                                            // decrypt a then hash prefix ‖ plaintext
            ige(key, 32, iv, a, b, length, 0);
            memcpy(hashed, prefix, prefix_length);
            memcpy(hashed + prefix_length, b, length);
            SHA256(hashed, prefix_length + length, digest);
            printf("dsha"); hex(key, 32); hex(iv, 32); hex(prefix, prefix_length); hex(a, length); hex(b, length);
            hex(digest, 32); putchar('\n');
        } else {                                                    // encrypt a while hashing prefix ‖ next
            size_t next_length = (size_t)(next_random() % 5000);
            fill(next, next_length);
            ige(key, 32, iv, a, b, length, 1);
            memcpy(hashed, prefix, prefix_length);
            memcpy(hashed + prefix_length, next, next_length);
            SHA256(hashed, prefix_length + next_length, digest);
            printf("esha"); hex(key, 32); hex(iv, 32); hex(a, length); hex(b, length); hex(prefix, prefix_length);
            hex(next, next_length); hex(digest, 32); putchar('\n');
        }
    }
    return 0;
}

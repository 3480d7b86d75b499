// libFuzzer's driver entry (compiler-rt FuzzerInterface.h): runs the fuzzing loop with `callback` and the command
// line. SwiftPM names an executable's entry point itself, so our `main.swift` calls this instead of relying on
// libFuzzer's own `main`.
#ifndef CFUZZERDRIVER_H
#define CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif

// CFuzzerDriver only declares libFuzzer's driver (include/CFuzzerDriver.h); SwiftPM needs one source file.

// libFuzzer target: TelegramMedia's MP4/QuickTime, JPEG and PNG header parsers (Fuzz/Properties/MediaInfoTarget.swift).
import FuzzSupport

runFuzzer { check("FuzzMediaInfo", input($0, $1)) }

#!/usr/bin/env python3
"""mtcall as a person uses it, against a two-DC mtserver on loopback (Tests/Interop/run runs this):

- `--mtserver` takes DC 2's port and the key from the ready line; `--version` prints the release;
- one PEER syntax: the `user#ID` that `events` prints is what `send` takes;
- `--phone` on a session signed in to that number spends no code; to another account it is a usage error (exit 64)
  unless `--switch-account`;
- `upload --to me` from a reopened session whose home moved (Bob: DC 1) sends the file, and `download --no-digest`
  brings it back with a line that has no sha256;
- failures say the next step: a session that is not signed in, a port of another DC, a refused port, a missing key
  file, a malformed PEER (exit 64 before connecting);
- `--output text` prints peers as `user#ID` and dates as UTC times;
- `edit`, `read`, `delete`, `forward` and `pin`: a usage error exits 64 before connecting, an id the chat lacks and a
  peer the cache has not seen exit 1 with a hint.
- `members`, `ban` and `promote` by PEER in a supergroup, and their usage errors (a filter, a right, a link).
- `react PEER MESSAGE_ID EMOJI` and `--remove` print the reactions as they now are; a missing EMOJI, a word for one
  and a missing title for `title` exit 64 before connecting.
- `download-media`: without MESSAGE_ID a usage error (exit 64); of a message without media exit 1, saying so.
- `--connections 3 --load-seconds 2`: a load of three clients, every call answered; with `--session`, exit 64.

Every wait is bounded; mtserver is stopped on the way out.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from telethon_common import free_port, start_mtserver, stop_mtserver, tool_arguments

ALICE = ("9996620001", "22222")
BOB = ("9996610002", "11111")


class Mtcall:
    def __init__(self, path, ready_file, workdir):
        self.path, self.ready_file, self.workdir = path, ready_file, workdir

    def run(self, *arguments, server=True, timeout=60):
        argv = [self.path, *(["--mtserver", self.ready_file] if server else []), "--timeout", "20", *arguments]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def session(self, name):
        return ["--session", os.path.join(self.workdir, name)]


def main():
    args = tool_arguments()
    results = []

    def check(name, condition, detail=""):
        results.append(bool(condition))
        print(f"{'ok  ' if condition else 'FAIL'} {name}" + ("" if condition else f": {detail}"), flush=True)

    with tempfile.TemporaryDirectory() as workdir:
        log = open(os.path.join(workdir, "mtserver.log"), "w")
        process, ready = start_mtserver(args.mtserver, ["--dcs", "2", "--timeout", "300", "--user",
                                                        f"{ALICE[0]}:Alice::alice_test", "--user",
                                                        f"{BOB[0]}:Bob::bob_test"], stderr=log)
        try:
            ready_file = os.path.join(workdir, "ready.json")
            with open(ready_file, "w") as f:
                f.write(json.dumps(ready) + "\n")
            mtcall = Mtcall(args.mtcall, ready_file, workdir)
            alice, bob = mtcall.session("alice.sqlite"), mtcall.session("bob.sqlite")
            me = '{"id": [{"_": "inputUserSelf"}]}'

            done = mtcall.run("--version", server=False)
            check("--version prints MAJOR.MINOR.PATCH", done.returncode == 0
                  and re.fullmatch(r"\d+\.\d+\.\d+\n", done.stdout), done.stdout + done.stderr)

            done = mtcall.run(*alice, "users.getUsers", me)
            check("a session not signed in: exit 1 and a hint to log in", done.returncode == 1
                  and "AUTH_KEY_UNREGISTERED" in done.stderr and "hint:" in done.stderr and "login" in done.stderr,
                  done.stderr)

            done = mtcall.run(*alice, "--phone", ALICE[0], "--code", ALICE[1], "users.getUsers", me)
            alice_id = json.loads(done.stdout)[0]["id"] if done.returncode == 0 else None
            check("--mtserver signs Alice in on DC 2", alice_id is not None, done.stderr)
            done = mtcall.run(*alice, "--phone", ALICE[0], "--code", "00000", "users.getUsers", me)
            check("--phone of the account already signed in spends no code (a wrong one is not used)",
                  done.returncode == 0 and json.loads(done.stdout)[0]["id"] == alice_id, done.stderr)
            done = mtcall.run(*alice, "--phone", BOB[0], "--code", BOB[1], "users.getUsers", me)
            check("--phone of another account: exit 64, naming --switch-account", done.returncode == 64
                  and "--switch-account" in done.stderr, f"exit {done.returncode}: {done.stderr}")
            done = mtcall.run(*alice, "users.getUsers", me)
            check("... and the session is still Alice's", done.returncode == 0
                  and json.loads(done.stdout)[0]["id"] == alice_id, done.stderr)

            # Bob signs in (moved to DC 1), then Alice follows her events while Bob writes; the sender Alice's
            # events print is the PEER she answers.
            done = mtcall.run(*bob, "--phone", BOB[0], "--code", BOB[1], "send", "@alice_test", "first")
            check("Bob signs in through PHONE_MIGRATE_1 and sends to @alice_test", done.returncode == 0, done.stderr)
            events = subprocess.Popen([args.mtcall, "--mtserver", ready_file, *alice, "--timeout", "15", "events"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                time.sleep(3)
                done = mtcall.run(*bob, "send", "@alice_test", "second")
                out, _ = events.communicate(timeout=40)
            finally:
                if events.poll() is None:
                    events.kill()
            lines = [json.loads(line) for line in out.splitlines() if line.strip()]
            senders = [e["sender"] for e in lines if e.get("event") == "newMessage" and not e["outgoing"]]
            check("events prints the sender as user#ID", senders and re.fullmatch(r"user#\d+", senders[0]), out)
            if senders:
                done = mtcall.run(*alice, "send", senders[0], "answer")
                check("send takes the user#ID events printed", done.returncode == 0, done.stderr)
                done = mtcall.run(*bob, "--output", "text", "history", "@alice_test", "--limit", "1")
                check("--output text: the answer with its peers as user#ID and its date in UTC",
                      done.returncode == 0 and '"answer"' in done.stdout and re.search(r"peer_id: user#\d+", done.stdout)
                      and re.search(r"date: \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ", done.stdout), done.stdout + done.stderr)

            # The message commands: ids as send and history print them, usage errors before connecting, typed errors after.
            done = mtcall.run(*bob, "send", "@alice_test", "to fix")
            last = next((u["id"] for u in json.loads(done.stdout)["updates"] if u["_"] == "updateMessageID"), None) \
                if done.returncode == 0 else None
            done = mtcall.run(*bob, "edit", "@alice_test", str(last), "<i>fixed</i>", "--html")
            edited = json.loads(done.stdout) if done.returncode == 0 else {}
            check("edit PEER ID TEXT --html prints the edited message", edited.get("message") == "fixed"
                  and edited.get("edit_date") is not None and edited.get("entities"), done.stdout + done.stderr)
            done = mtcall.run(*bob, "read", "@alice_test")
            check("read PEER marks the chat read", done.returncode == 0 and '"read"' in done.stdout, done.stderr)
            done = mtcall.run(*bob, "react", "@alice_test", str(last), "👍")
            counts = json.loads(done.stdout)["reactions"]["counts"] if done.returncode == 0 else None
            check("react PEER ID EMOJI prints the reactions with the account's own",
                  counts == [{"reaction": "👍", "count": 1, "mine": True}], done.stdout + done.stderr)
            done = mtcall.run(*bob, "react", "@alice_test", str(last), "--remove")
            check("react PEER ID --remove takes it back", done.returncode == 0
                  and json.loads(done.stdout)["reactions"]["counts"] == [], done.stdout + done.stderr)
            for arguments, what in ((["edit", "@alice_test", "5"], "edit without TEXT"),
                                    (["delete", "@alice_test", "0"], "delete of id 0"),
                                    (["forward", "@alice_test", "1"], "forward without --to"),
                                    (["pin", "@alice_test", "x"], "pin of a non-number"),
                                    (["react", "@alice_test", "5"], "react without EMOJI"),
                                    (["react", "@alice_test", "5", "hello"], "react with a word for EMOJI"),
                                    (["react", "@alice_test", "5", "👍", "--remove"], "react with EMOJI and --remove"),
                                    (["title", "channel:1"], "title without TEXT")):
                done = mtcall.run(*bob, *arguments)
                check(f"{what}: exit 64 with the usage", done.returncode == 64 and "usage: mtcall" in done.stderr,
                      f"exit {done.returncode}: {done.stderr}")
            done = mtcall.run(*bob, "edit", "@alice_test", "99999", "x")
            check("edit of an id the chat lacks: exit 1, naming the id, the hint naming history",
                  done.returncode == 1 and "no message 99999" in done.stderr and "history" in done.stderr, done.stderr)
            done = mtcall.run(*bob, "pin", "user:424242", "1")
            check("pin in a chat the cache has not seen: exit 1, the hint naming @username",
                  done.returncode == 1 and "user#424242" in done.stderr and "@username" in done.stderr, done.stderr)
            done = mtcall.run(*bob, "download-media", "@alice_test")
            check("download-media without MESSAGE_ID: exit 64 with the usage",
                  done.returncode == 64 and "usage: mtcall download-media" in done.stderr, done.stderr)
            done = mtcall.run(*bob, "download-media", "@alice_test", str(last))
            check("download-media of a text message: exit 1, saying it has no media",
                  done.returncode == 1 and "has no media" in done.stderr, done.stderr)

            # A load of a few clients: every call answered, one JSON line; a session is refused.
            done = mtcall.run("--connections", "3", "--load-seconds", "2", "help.getNearestDc")
            load = json.loads(done.stdout.splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else {}
            check("--connections 3 --load-seconds 2: 6 calls answered, none failed, with the latency percentiles",
                  load.get("calls") == 6 and load.get("answered") == 6 and load.get("failed") == 0
                  and load.get("p99_ms", -1) >= load.get("p50_ms", 0) > 0, done.stdout + done.stderr)
            done = mtcall.run(*bob, "--connections", "3", "help.getNearestDc")
            check("--connections with --session: exit 64, naming --session", done.returncode == 64
                  and "--session" in done.stderr, done.stderr)

            # Bob's session reopened: configured on DC 2, its home DC 1.
            payload = os.path.join(workdir, "payload.bin")
            with open(payload, "wb") as f:
                f.write(os.urandom(100_000))
            done = mtcall.run(*bob, "upload", payload, "--to", "me")
            sent = json.loads(done.stdout) if done.returncode == 0 else {}
            check("upload --to me from the reopened session lands on Bob's home DC 1",
                  sent.get("dc") == 1 and sent.get("size") == 100_000, done.stderr)
            if sent:
                copy = os.path.join(workdir, "copy.bin")
                done = mtcall.run(*bob, "download", json.dumps(sent), "--out", copy, "--no-digest")
                got = json.loads(done.stdout) if done.returncode == 0 else {}
                same = False
                if os.path.exists(copy):
                    with open(payload, "rb") as original, open(copy, "rb") as back:
                        same = original.read() == back.read()
                check("download --no-digest: the bytes, and a line without sha256", done.returncode == 0 and same
                      and "sha256" not in got and got.get("size") == 100_000, done.stdout + done.stderr)

            # Groups: Alice makes a supergroup with a raw call, then lists, bans and promotes by PEER.
            done = mtcall.run(*alice, "channels.createChannel", '{"megagroup": true, "title": "Usage", "about": ""}')
            made = json.loads(done.stdout) if done.returncode == 0 else {}
            group = next((f"channel:{c['id']}" for c in made.get("chats", []) if c.get("_") == "channel"), None)
            check("a supergroup made with channels.createChannel", group is not None, done.stderr)
            if group:
                done = mtcall.run(*alice, "members", group)
                rows = [json.loads(line) for line in done.stdout.splitlines()]
                check("members prints the creator alone, as user#ID", done.returncode == 0 and len(rows) == 1
                      and rows[0]["role"] == "creator" and rows[0]["user"] == f"user#{alice_id}", done.stdout + done.stderr)
                done = mtcall.run(*alice, "ban", group, "@bob_test")
                check("ban takes a username", done.returncode == 0 and '"banned"' in done.stdout, done.stderr)
                done = mtcall.run(*alice, "members", group, "--filter", "banned")
                check("members --filter banned lists him", done.returncode == 0 and "user#" in done.stdout
                      and len(done.stdout.splitlines()) == 1, done.stdout + done.stderr)
                done = mtcall.run(*alice, "promote", group, "@bob_test", "--rights", "ban_users")
                check("promote of a user not in the group: exit 1, the reason in words with Telegram's error",
                      done.returncode == 1 and "USER_NOT_PARTICIPANT" in done.stderr, done.stderr)
            done = mtcall.run(*alice, "members", "channel:1", "--filter", "friends")
            check("a malformed --filter: exit 64, with the filters", done.returncode == 64 and "search:QUERY" in done.stderr,
                  done.stderr)
            done = mtcall.run(*alice, "promote", "channel:1", "@bob_test", "--rights", "rule_all")
            check("an unknown admin right: exit 64, naming the rights", done.returncode == 64
                  and "ban_users" in done.stderr, done.stderr)
            done = mtcall.run(*alice, "join", "https://t.me/durov")
            check("join of a link that is no invite: exit 64 before connecting", done.returncode == 64
                  and "not an invite link" in done.stderr, done.stderr)

            done = mtcall.run(*bob, "send", "not a peer", "x")
            check("a malformed PEER: exit 64, with the forms", done.returncode == 64 and "user:ID" in done.stderr,
                  done.stderr)
            done = mtcall.run("--server", f"127.0.0.1:{ready['ports']['1']}", "--rsa-key", payload, "help.getNearestDc",
                              server=False)
            check("--rsa-key that holds no key: exit 64", done.returncode == 64 and "--rsa-key" in done.stderr,
                  done.stderr)
            keyfile = os.path.join(workdir, "key.pem")
            with open(keyfile, "w") as f:
                f.write(ready["public_key"])
            done = mtcall.run("--server", f"127.0.0.1:{ready['ports']['1']}", "--rsa-key", keyfile, "--dc", "2",
                              "help.getNearestDc", server=False)
            check("DC 1's port taken for DC 2: exit 1, the server's -404 reported, the hint names the ready line's ports",
                  done.returncode == 1 and "-404" in done.stderr and "serves another DC" in done.stderr
                  and '"ports"' in done.stderr, done.stderr)
            done = mtcall.run("--server", f"127.0.0.1:{free_port()}", "--rsa-key", keyfile, "help.getNearestDc",
                              server=False)
            check("a refused port: one line in words, exit 1", done.returncode == 1
                  and "connection refused" in done.stderr and "SingleConnectionFailure" not in done.stderr,
                  done.stderr)
        finally:
            stop_mtserver(process)
            log.close()
    passed = sum(results)
    print(f"mtcall usage: {passed} passed, {len(results) - passed} failed", flush=True)
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())

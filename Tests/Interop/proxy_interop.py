#!/usr/bin/env python3
"""mtcall through real proxy servers to mtserver: microsocks (SOCKS5) and tinyproxy (HTTP CONNECT), both from
Debian's packages (.ci/run installs them), each started here with its own configuration (a user and a password) on a
free loopback port and stopped at the end.

For each proxy: `mtcall help.getNearestDc` over abridged, intermediate, padded intermediate and full, plain; the
first three obfuscated; padded intermediate to an MTProxy port with a `dd` and (a second mtserver) with an `ee`
(fake-TLS) secret, behind the proxy. tinyproxy's log must show each tunnel. Then a wrong password: mtcall exits 1 naming the
proxy's refusal (microsocks: RFC 1929 status 1; tinyproxy: 401). Last, IPv6: mtcall reaches mtserver on [::1]
directly and through each proxy. Every subprocess is bounded in time.

Usage: proxy_interop.py --mtserver PATH --mtcall PATH
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from telethon_common import free_port, start_mtserver, stop_mtserver

SECRET = "0123456789abcdef" * 2
FAKE_TLS_DOMAIN = "localhost".encode().hex()
USER, PASSWORD = "alice", "s3cret-proxy"


def wait_listening(port, process, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"proxy exited with {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"proxy not listening on {port} after {seconds} s")


def start_proxies(workdir):
    """(microsocks process, its URL base, tinyproxy process, its URL base, tinyproxy's log path)."""
    socks_port, http_port = free_port(), free_port()
    socks = subprocess.Popen(["microsocks", "-i", "127.0.0.1", "-p", str(socks_port), "-u", USER, "-P", PASSWORD],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = os.path.join(workdir, "tinyproxy.log")
    config = os.path.join(workdir, "tinyproxy.conf")
    with open(config, "w") as handle:
        handle.write(f"Port {http_port}\nListen 127.0.0.1\nTimeout 60\nMaxClients 64\nLogLevel Connect\n"
                     f'LogFile "{log}"\nBasicAuth {USER} {PASSWORD}\n')
    http = subprocess.Popen(["tinyproxy", "-d", "-c", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(socks_port, socks)
    wait_listening(http_port, http)
    return socks, f"127.0.0.1:{socks_port}", http, f"127.0.0.1:{http_port}", log


def stop(process):
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()


def mtcall(path, argv):
    return subprocess.run([path, "--timeout", "20", *argv, "help.getNearestDc"], capture_output=True, text=True,
                          timeout=60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", required=True)
    parser.add_argument("--mtcall", required=True)
    args = parser.parse_args()
    results = []

    def check(name, done, expect_ok=True, stderr_has=None):
        ok = (done.returncode == 0) == expect_ok
        if ok and expect_ok:
            ok = json.loads(done.stdout).get("_") == "nearestDc"
        if ok and stderr_has:
            ok = stderr_has in done.stderr
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": exit {done.returncode}: {done.stderr.strip()}"),
              flush=True)

    with tempfile.TemporaryDirectory() as workdir:
        keyfile = os.path.join(workdir, "key.pem")
        server_log = open(os.path.join(workdir, "mtserver.log"), "a")
        server, ready = start_mtserver(args.mtserver, ["--dcs", "2", "--secret", "dd" + SECRET, "--timeout", "300"],
                                       stderr=server_log)
        tls_secret = "ee" + SECRET + FAKE_TLS_DOMAIN
        tls_server, tls_ready = start_mtserver(args.mtserver, ["--dcs", "2", "--secret", tls_secret, "--timeout", "300"],
                                               stderr=server_log)
        socks, socks_at, http, http_at, http_log = start_proxies(workdir)
        try:
            with open(keyfile, "w") as handle:
                handle.write(ready["public_key"])
            tls_keyfile = os.path.join(workdir, "tls-key.pem")
            with open(tls_keyfile, "w") as handle:
                handle.write(tls_ready["public_key"])
            dc2 = f"127.0.0.1:{ready['ports']['2']}"
            mtproxy = f"127.0.0.1:{ready['proxy_port']}"
            for scheme, at in (("socks5", socks_at), ("http", http_at)):
                url = f"{scheme}://{USER}:{PASSWORD}@{at}"
                base = ["--rsa-key", keyfile, "--proxy", url]
                for framing in ("abridged", "intermediate", "padded", "full"):
                    check(f"{scheme} proxy, {framing}", mtcall(args.mtcall, [*base, "--server", dc2, "--transport", framing]))
                for framing in ("abridged", "intermediate", "padded"):
                    check(f"{scheme} proxy, {framing} obfuscated",
                          mtcall(args.mtcall, [*base, "--server", dc2, "--transport", framing, "--obfuscated"]))
                check(f"{scheme} proxy, then MTProxy dd",
                      mtcall(args.mtcall, [*base, "--dc", "2", "--proxy", mtproxy, "--proxy-secret", "dd" + SECRET,
                                           "--transport", "padded"]))
                check(f"{scheme} proxy, then MTProxy ee (fake TLS)",
                      mtcall(args.mtcall, ["--rsa-key", tls_keyfile, "--proxy", url, "--dc", "2", "--proxy",
                                           f"127.0.0.1:{tls_ready['proxy_port']}", "--proxy-secret", tls_secret,
                                           "--transport", "padded"]))
                wrong = ["--rsa-key", keyfile, "--server", dc2, "--proxy", f"{scheme}://{USER}:wrong@{at}"]
                check(f"{scheme} proxy, wrong password fails clearly", mtcall(args.mtcall, wrong), expect_ok=False,
                      stderr_has="refused the user name and password" if scheme == "socks5"
                      else "401 Unauthorized (proxy credentials missing or wrong)")
            # IPv6: mtserver listens on ::1 too; mtcall reaches it directly and through each proxy (a SOCKS5 CONNECT
            # to an IPv6 address, an HTTP CONNECT to [::1]:PORT).
            if ready.get("ipv6_host") == "::1":
                dc2_v6 = f"[::1]:{ready['ports']['2']}"
                check("IPv6: direct to [::1]", mtcall(args.mtcall, ["--rsa-key", keyfile, "--server", dc2_v6]))
                for scheme, at in (("socks5", socks_at), ("http", http_at)):
                    check(f"IPv6: {scheme} proxy to [::1]",
                          mtcall(args.mtcall, ["--rsa-key", keyfile, "--server", dc2_v6, "--proxy",
                                               f"{scheme}://{USER}:{PASSWORD}@{at}"]))
            else:
                results.append(False)
                print(f"FAIL mtserver does not listen on ::1: {ready.get('ipv6_host')}", flush=True)
            with open(http_log) as handle:
                tunnels = handle.read()
            expected = tunnels.count(f"CONNECT {dc2} HTTP/1.1") >= 7 and f"CONNECT {mtproxy} HTTP/1.1" in tunnels
            results.append(expected)
            print(f"{'ok  ' if expected else 'FAIL'} tinyproxy logged the tunnels to {dc2} and {mtproxy}", flush=True)
        finally:
            stop(socks)
            stop(http)
            stop_mtserver(server)
            stop_mtserver(tls_server)
            server_log.close()
    failed = results.count(False)
    print(f"proxy interop: {len(results) - failed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

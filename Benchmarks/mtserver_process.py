"""What the benchmark scripts share: swift build's folder of binaries, and an mtserver that runs for the length of a
`with` block (stopped with SIGTERM at its end, however the block ends)."""
import contextlib
import json
import os
import subprocess


def build_dir(configuration):
    """The folder `swift build -c CONFIGURATION` puts its binaries in."""
    return subprocess.run(["swift", "build", "-c", configuration, "--show-bin-path"], capture_output=True, text=True,
                          check=True).stdout.strip()


@contextlib.contextmanager
def running_mtserver(binary, workdir, file_limit_mb, user, *extra):
    """Starts `mtserver --generate-key` with the account `user` and room for `file_limit_mb` of files; yields the JSON
    line it printed when ready and the path of its public key written into `workdir`."""
    server = subprocess.Popen([os.path.join(binary, "mtserver"), "--generate-key", "--timeout", "3600",
                               "--file-limit-mb", str(file_limit_mb), "--user", user, "--log-level", "error", *extra],
                              stdout=subprocess.PIPE, text=True)
    try:
        ready = json.loads(server.stdout.readline())
        keyfile = os.path.join(workdir, "key.pem")
        with open(keyfile, "w") as handle:
            handle.write(ready["public_key"])
        yield ready, keyfile
    finally:
        server.terminate()
        server.wait(10)

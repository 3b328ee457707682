"""HTTPS as vLLM serves it (--ssl-keyfile, --ssl-certfile, --ssl-ca-certs, --ssl-cert-reqs,
--ssl-ciphers, --enable-ssl-refresh): Python's ssl module checks the server certificate against
a CA made here with the openssl command; client certificates are required when asked for; bad
files stop start-up naming the flag and the file."""
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile

from harness import BIN, STORIES_GGUF, Server, check, free_port, run


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


class Pki:
    """A CA, a server certificate for 127.0.0.1 signed by it, a client certificate signed by it,
    and a second self-signed server certificate (for rotation), in a temporary folder."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="tandem-tls-")
        d = self.path
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d("ca.key"),
                "-out", d("ca.pem"), "-days", "2", "-subj", "/CN=tandem test CA")
        for name in ("server", "client"):
            openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", d(f"{name}.key"),
                    "-out", d(f"{name}.csr"), "-subj", f"/CN=tandem test {name}")
            ext = d(f"{name}.ext")
            with open(ext, "w") as f:
                f.write("subjectAltName=IP:127.0.0.1\n" if name == "server" else
                        "extendedKeyUsage=clientAuth\n")
            openssl("x509", "-req", "-in", d(f"{name}.csr"), "-CA", d("ca.pem"), "-CAkey",
                    d("ca.key"), "-CAcreateserial", "-out", d(f"{name}.pem"), "-days", "2",
                    "-extfile", ext)
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d("rotated.key"),
                "-out", d("rotated.pem"), "-days", "2", "-subj", "/CN=tandem rotated",
                "-addext", "subjectAltName=IP:127.0.0.1")

    def path(self, name):
        return os.path.join(self.dir, name)

    def client_context(self, with_client_cert=False, extra_ca=None):
        context = ssl.create_default_context(cafile=self.path("ca.pem"))
        if extra_ca:
            context.load_verify_locations(cafile=extra_ca)
        if with_client_cert:
            context.load_cert_chain(self.path("client.pem"), self.path("client.key"))
        return context

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


PKI = None


def tls_args(pki, *more):
    return ("--ssl-keyfile", pki.path("server.key"), "--ssl-certfile", pki.path("server.pem"),
            *more)


def complete(srv):
    status, body = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 4})
    check(status == 200 and body["choices"][0]["text"], f"completion over HTTPS: {status} {body}")


def test_https_serves_verified_plain_and_streaming():
    with Server(STORIES_GGUF, *tls_args(PKI), tls_context=PKI.client_context()) as srv:
        log = srv.full_log()
        check("HTTPS: TLS 1.2/1.3 with certificate" in log and "CN=tandem test server" in log,
              f"the start-up log names the certificate:\n{srv.logs()}")
        complete(srv)
        status, events, done = srv.stream("/v1/completions",
                                          {"prompt": "Once", "max_tokens": 4, "stream": True})
        check(status == 200 and done and len(events) == 4, f"a stream over HTTPS: {events}")
        # A client that trusts another CA refuses the server; the server goes on.
        other = ssl.create_default_context(cafile=PKI.path("rotated.pem"))
        try:
            with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as raw:
                with other.wrap_socket(raw, server_hostname="127.0.0.1"):
                    check(False, "a client that trusts another CA completed the handshake")
        except ssl.SSLCertVerificationError:
            pass
        complete(srv)


def test_a_close_delimited_stream_ends_with_close_notify():
    # An HTTP/1.0 stream has no chunks: its end is the close, which TLS must announce
    # (close_notify, RFC 8446 §6.1), else a client cannot tell it from a cut connection.
    with Server(STORIES_GGUF, *tls_args(PKI), tls_context=PKI.client_context()) as srv:
        body = b'{"prompt": "Once", "max_tokens": 3, "stream": true}'
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as raw:
            with PKI.client_context().wrap_socket(raw, server_hostname="127.0.0.1",
                                                  suppress_ragged_eofs=False) as tls:
                tls.sendall(b"POST /v1/completions HTTP/1.0\r\nContent-Type: application/json"
                            b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                reply = b""
                try:
                    while chunk := tls.recv(65536):
                        reply += chunk
                except ssl.SSLEOFError as e:
                    check(False, f"the stream ended without close_notify: {e}; {reply[-80:]!r}")
        check(reply.rstrip().endswith(b"data: [DONE]"), f"the whole stream: {reply[-200:]!r}")
        complete(srv)


def test_plain_http_on_the_https_port_gets_a_plain_400():
    with Server(STORIES_GGUF, *tls_args(PKI), tls_context=PKI.client_context()) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as raw:
            raw.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            reply = b""
            while chunk := raw.recv(4096):
                reply += chunk
        head, _, body = reply.partition(b"\r\n\r\n")
        check(head.startswith(b"HTTP/1.1 400"), f"plain HTTP on the HTTPS port: {reply[:300]}")
        message = json.loads(body)["error"]["message"]
        check("plain HTTP request sent to an HTTPS port" in message, message)
        complete(srv)


def test_client_certificates_required():
    args = tls_args(PKI, "--ssl-ca-certs", PKI.path("ca.pem"), "--ssl-cert-reqs", "2")
    with Server(STORIES_GGUF, *args, tls_context=PKI.client_context(with_client_cert=True)) as srv:
        check("client certificates required" in srv.full_log(), srv.logs())
        complete(srv)
        # Without a client certificate the handshake (TLS 1.3: the first read) fails.
        refused = False
        try:
            with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as raw:
                with PKI.client_context().wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    tls.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                    refused = tls.recv(4096) == b""
        except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
            refused = True
        check(refused, "a client without a certificate was served")
        complete(srv)


def test_enable_ssl_refresh_picks_up_a_rotated_certificate():
    work = tempfile.mkdtemp(prefix="tandem-tls-rotate-")
    key, cert = os.path.join(work, "key.pem"), os.path.join(work, "cert.pem")
    shutil.copy(PKI.path("server.key"), key)
    shutil.copy(PKI.path("server.pem"), cert)
    context = PKI.client_context(extra_ca=PKI.path("rotated.pem"))
    try:
        with Server(STORIES_GGUF, "--ssl-keyfile", key, "--ssl-certfile", cert,
                    "--enable-ssl-refresh", tls_context=context) as srv:

            def served_common_name():
                with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as raw:
                    with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                        subject = dict(x[0] for x in tls.getpeercert()["subject"])
                        return subject["commonName"]

            check(served_common_name() == "tandem test server", "the first certificate")
            # Rotate as certbot does: new files moved into place (key first, then certificate).
            for src, dst in (("rotated.key", key), ("rotated.pem", cert)):
                shutil.copy(PKI.path(src), dst + ".new")
                os.replace(dst + ".new", dst)
            check(served_common_name() == "tandem rotated",
                  f"the rotated certificate on a new connection:\n{srv.logs()}")
            check("reloaded the TLS certificate and key" in srv.full_log(), srv.logs())
            complete(srv)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_bad_tls_flags_stop_start_up_naming_flag_and_file():
    d = PKI.path
    with open(d("garbage.pem"), "w") as f:
        f.write("not a certificate\n")
    cases = [
        (["--ssl-keyfile", d("server.key")], "--ssl-keyfile needs --ssl-certfile"),
        (["--ssl-certfile", d("server.pem")], "--ssl-certfile needs --ssl-keyfile"),
        (["--ssl-keyfile", d("server.key"), "--ssl-certfile", d("missing.pem")],
         f"--ssl-certfile '{d('missing.pem')}': cannot read the file"),
        (["--ssl-keyfile", d("server.key"), "--ssl-certfile", PKI.dir],
         f"--ssl-certfile '{PKI.dir}': not a regular file"),
        (["--ssl-keyfile", d("server.key"), "--ssl-certfile", d("garbage.pem")],
         f"--ssl-certfile '{d('garbage.pem')}': not a PEM certificate chain"),
        (["--ssl-keyfile", d("garbage.pem"), "--ssl-certfile", d("server.pem")],
         f"--ssl-keyfile '{d('garbage.pem')}': not an unencrypted PEM private key"),
        (["--ssl-keyfile", d("client.key"), "--ssl-certfile", d("server.pem")],
         "does not match the certificate in --ssl-certfile"),
        (list(tls_args(PKI, "--ssl-cert-reqs", "2")), "--ssl-cert-reqs 2 asks for client "
         "certificates: give --ssl-ca-certs"),
        (list(tls_args(PKI, "--ssl-ca-certs", d("garbage.pem"))),
         f"--ssl-ca-certs '{d('garbage.pem')}': not PEM certificates"),
        (list(tls_args(PKI, "--ssl-ciphers", "NO-SUCH-CIPHER")),
         "--ssl-ciphers 'NO-SUCH-CIPHER': OpenSSL accepts none of them"),
        (list(tls_args(PKI, "--ssl-cert-reqs", "3")), "--ssl-cert-reqs"),
        (["--ssl-ca-certs", d("ca.pem")], "need --ssl-keyfile and --ssl-certfile"),
    ]
    for args, needle in cases:
        p = subprocess.run([BIN, "serve", STORIES_GGUF, "--host", "127.0.0.1", "--port", str(free_port()), *args],
                           capture_output=True, text=True, timeout=60)
        out = p.stdout + p.stderr
        check(p.returncode != 0 and needle in out,
              f"{args}: code {p.returncode}, wanted '{needle}':\n{out[-600:]}")


if __name__ == "__main__":
    PKI = Pki()
    try:
        run([test_https_serves_verified_plain_and_streaming,
             test_a_close_delimited_stream_ends_with_close_notify,
             test_plain_http_on_the_https_port_gets_a_plain_400,
             test_client_certificates_required,
             test_enable_ssl_refresh_picks_up_a_rotated_certificate,
             test_bad_tls_flags_stop_start_up_naming_flag_and_file])
    finally:
        PKI.remove()

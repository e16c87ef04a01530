"""An https:// service that requires client certificates: the CA and certificate files, an ssl.SSLContext, refusals."""

from __future__ import annotations

import ssl

from ._env import TestCase, environment, key

from lock_service import Client, InvalidArgument, Unreachable


class Tls(TestCase):
    def tls_client(self, **options: object) -> Client:
        env = environment()
        return Client(env["tls"]["service"], api_key=env["adminKey"], **options)  # type: ignore[arg-type]

    def test_ca_file_and_client_certificate(self) -> None:
        tls = environment()["tls"]
        with self.tls_client(ca_file=tls["caFile"], cert_file=tls["certFile"], key_file=tls["keyFile"]) as client:
            hold = client.locks.acquire(key("tls-files"), ttl_ms=10_000)
            self.assertGreater(hold.fence, 0)
            self.assertIsNotNone(client.locks.inspect(key("tls-files")))
            client.locks.release(key("tls-files"), hold.token)

    def test_an_ssl_context_of_ones_own(self) -> None:
        tls = environment()["tls"]
        context = ssl.create_default_context(cafile=tls["caFile"])
        context.load_cert_chain(tls["certFile"], tls["keyFile"])
        with self.tls_client(ssl_context=context) as client:
            self.assertEqual(client.health()["status"], "ok")

    def test_refused_clients_get_unreachable_and_take_nothing(self) -> None:
        tls = environment()["tls"]
        cases = {
            "a CA that did not sign the service": {
                "ca_file": tls["otherCaFile"],
                "cert_file": tls["certFile"],
                "key_file": tls["keyFile"],
            },
            "no client certificate": {"ca_file": tls["caFile"]},
        }
        for what, options in cases.items():
            with self.subTest(what), self.tls_client(**options, retry_budget_ms=0) as client:
                with self.assertRaises(Unreachable) as caught:
                    client.locks.acquire(key("tls-refused"), ttl_ms=10_000)
                self.assertRegex(str(caught.exception), r"SSL|certificate|broke", what)
        self.assertIsNone(self.client.locks.inspect(key("tls-refused")))

    def test_bad_settings_are_invalid_arguments(self) -> None:
        tls = environment()["tls"]
        with self.assertRaises(InvalidArgument):
            self.tls_client(cert_file=tls["certFile"])
        with self.assertRaises(InvalidArgument):
            self.tls_client(ssl_context=ssl.create_default_context(), ca_file=tls["caFile"])
        with self.assertRaises(ValueError):
            Client(environment()["service"], ca_file=tls["caFile"])

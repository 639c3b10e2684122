"""The tool's key pair: the private key signs `lms push`'s requests for access tokens (LTI
Advantage's client credentials, 1EdTech Security Framework 4.1), the LMS checks them with the
public key (pasted into its registration, or read from the hub's /hub/lti13/jwks). The private
key stays in the instructor's LMS folder, 0600 (files.py); it needs the `lti` extra."""

from __future__ import annotations

import json
import os
from pathlib import Path

from attention_course.errors import UserError
from attention_course.integrations.lms import files
from attention_course.settings import LMS, Lms


def key_path(root: Path, settings: Lms = LMS) -> Path:
    return root / settings.folder / settings.key_file


def make_key(root: Path, settings: Lms = LMS, replace: bool = False) -> tuple[Path, bool]:
    """The tool's private key file, made (RSA, PEM, 0600) when missing or when `replace`;
    returns it and whether it was made now."""
    from jwcrypto.jwk import JWK

    path = key_path(root, settings)
    if path.exists() and not replace:
        read_private(root, settings)  # an existing key must be whole and private
        return path, False
    files.folder(root, settings)
    key = JWK.generate(kty="RSA", size=settings.key_bits)
    files.write_private(path, key.export_to_pem(private_key=True, password=None).decode(), root)
    return path, True


def read_private(root: Path, settings: Lms = LMS) -> str:
    """The private key's PEM text (UserError if it is missing, open to others or not a key)."""
    path = key_path(root, settings)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # (the hub reads it as root)
        with os.fdopen(fd) as found:
            mode = os.fstat(found.fileno()).st_mode & 0o777
            text = found.read()
    except FileNotFoundError:
        raise UserError(
            f"{path}: no tool key yet (attention-course lms keys makes it; register its public "
            "key in the LMS)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not readable ({getattr(exc, 'strerror', None) or exc})") from None
    if mode & 0o077:
        raise UserError(f"{path}: readable by others (mode {mode:o}): chmod 600 {path}")
    if "PRIVATE KEY" not in text:
        raise UserError(f"{path}: not a PEM private key")
    return text


def public_pem(private_pem: str) -> str:
    from jwcrypto.jwk import JWK

    return JWK.from_pem(private_pem.encode()).export_to_pem().decode()


def public_jwk(private_pem: str) -> dict:
    """The public key as a JWK, its kid the key's RFC 7638 thumbprint (as pylti1p3 names it)."""
    from jwcrypto.jwk import JWK

    key = JWK.from_pem(private_pem.encode())
    found = json.loads(key.export_public())
    found.update(kid=key.thumbprint(), alg="RS256", use="sig")
    return found

"""The SCRAM control manager (Kafka's ScramControlManager): it owns users' SCRAM credentials. It decides
AlterUserScramCredentials and the bootstrap credentials the cluster is started with, and answers
DescribeUserScramCredentials from an image. Pure functions of an image and a request.

A credential is kept as UserScramCredentialRecord: salt, StoredKey = H(HMAC(SaltedPassword, "Client
Key")), ServerKey = HMAC(SaltedPassword, "Server Key"), iterations (RFC 5802); the client sends the
salted password, never the password, and the salted password itself is not kept either.

Results are per user: any refused change of a user refuses all of that user's changes in the request
(UNSUPPORTED_SASL_MECHANISM for an unknown mechanism, UNACCEPTABLE_CREDENTIAL for an empty name, an
iteration count outside 4096-16384 or an empty salt or salted password, DUPLICATE_RESOURCE for a
mechanism named twice for the user, RESOURCE_NOT_FOUND for deleting a credential that does not exist;
UNSUPPORTED_VERSION for every change at a metadata.version below 3.5-IV2, a twin of an older cluster).
"""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.message import Message
from kraftwire.codec.messages import (AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
                                      DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse)
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.record_versions import SCRAM_LEVEL

from .result import ControllerResult

MECHANISM_IDS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
_HASHES = {1: hashlib.sha256, 2: hashlib.sha512}
MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384


def credential_record(name: str, mechanism: int, salt: bytes, salted_password: bytes,
                      iterations: int) -> rec.UserScramCredentialRecord:
    digest = _HASHES[mechanism]
    client_key = hmac.new(salted_password, b"Client Key", digest).digest()
    server_key = hmac.new(salted_password, b"Server Key", digest).digest()
    return rec.UserScramCredentialRecord(name=name, mechanism=mechanism, salt=salt,
                                         stored_key=digest(client_key).digest(), server_key=server_key,
                                         iterations=iterations)


def salted_password(mechanism: int, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(password, salt, i) of RFC 5802: PBKDF2 with the mechanism's hash."""
    return hashlib.pbkdf2_hmac(_HASHES[mechanism]().name, password.encode(), salt, iterations)


BootstrapCredential = tuple[str, int, bytes, bytes, int]  # (name, mechanism id, salt, salted password, iterations)


def bootstrap_credentials(image: MetadataImage, credentials: Iterable[BootstrapCredential]) -> ControllerResult:
    """Records for the (name, mechanism id, salt, salted password, iterations) not in the image yet, as
    ``kafka-storage format --add-scram`` writes them once, when the cluster is first formatted."""
    return ControllerResult([credential_record(*c) for c in credentials if (c[1], c[0]) not in image.scram])


Deletion = AlterUserScramCredentialsRequest.ScramCredentialDeletion
Upsertion = AlterUserScramCredentialsRequest.ScramCredentialUpsertion


def _problem(change: Deletion | Upsertion) -> tuple[int, str] | None:
    if not change.name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if change.mechanism not in _HASHES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if isinstance(change, Upsertion):
        if not MIN_ITERATIONS <= change.iterations <= MAX_ITERATIONS:
            return (ErrorCode.UNACCEPTABLE_CREDENTIAL,
                    f"Iterations must be between {MIN_ITERATIONS} and {MAX_ITERATIONS}")
        if not change.salt or not change.salted_password:
            return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Salt and salted password must not be empty"
    return None


# Below 3.5-IV2 (a twin of an older cluster) the controller keeps no SCRAM credentials.
NO_SCRAM = ErrorCode.UNSUPPORTED_VERSION, "The current metadata.version does not support SCRAM"


def alter_user_scram_credentials(image: MetadataImage, request: AlterUserScramCredentialsRequest) -> ControllerResult:
    problems: dict[str, tuple[int, str]] = {}
    seen: set[tuple[str, int]] = set()
    users: list[str] = []
    scram_supported = image.metadata_version_level >= SCRAM_LEVEL  # Kafka's MetadataVersion.isScramSupported
    changes: list[tuple[Deletion | Upsertion, bool]] = [*((d, False) for d in request.deletions),
                                                        *((u, True) for u in request.upsertions)]
    for change, upsert in changes:
        if change.name not in users:
            users.append(change.name)
        key = (change.name, change.mechanism)
        problem = _problem(change) if scram_supported else NO_SCRAM
        if problem is None and key in seen:
            problem = ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"
        if problem is None and not upsert and (change.mechanism, change.name) not in image.scram:
            problem = ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
        seen.add(key)
        if problem is not None:
            problems.setdefault(change.name, problem)
    records: list[Message] = [rec.RemoveUserScramCredentialRecord(name=d.name, mechanism=d.mechanism)
                              for d in request.deletions if d.name not in problems]
    records += [credential_record(u.name, u.mechanism, bytes(u.salt), bytes(u.salted_password), u.iterations)
                for u in request.upsertions if u.name not in problems]
    Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
    return ControllerResult(records, AlterUserScramCredentialsResponse(results=[
        Result(user=user, error_code=problems.get(user, (ErrorCode.NONE, None))[0],
               error_message=problems.get(user, (ErrorCode.NONE, None))[1]) for user in users]))


def describe_user_scram_credentials(
        image: MetadataImage, request: DescribeUserScramCredentialsRequest) -> DescribeUserScramCredentialsResponse:
    """Every user with a credential (``Users`` null or empty), or the named ones: RESOURCE_NOT_FOUND for
    a user without one, DUPLICATE_RESOURCE for a user named twice."""
    by_user: dict[str, list[DescribeUserScramCredentialsResponse.CredentialInfo]] = {}
    for (mechanism, name), (_salt, _stored, _server, iterations) in sorted(image.scram.items()):
        by_user.setdefault(name, []).append(
            DescribeUserScramCredentialsResponse.CredentialInfo(mechanism=mechanism, iterations=iterations))
    Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
    if not request.users:
        return DescribeUserScramCredentialsResponse(results=[
            Result(user=name, error_code=ErrorCode.NONE, error_message=None, credential_infos=infos)
            for name, infos in by_user.items()])
    names = [u.name for u in request.users]
    results = []
    for name in dict.fromkeys(names):
        if names.count(name) > 1:
            results.append(Result(user=name, error_code=ErrorCode.DUPLICATE_RESOURCE,
                                  error_message="Cannot describe SCRAM credentials for the same user twice in a "
                                                "single request", credential_infos=[]))
        elif name not in by_user:
            results.append(Result(user=name, error_code=ErrorCode.RESOURCE_NOT_FOUND,
                                  error_message="Attempt to describe a user credential that does not exist",
                                  credential_infos=[]))
        else:
            results.append(Result(user=name, error_code=ErrorCode.NONE, error_message=None,
                                  credential_infos=by_user[name]))
    return DescribeUserScramCredentialsResponse(results=results)

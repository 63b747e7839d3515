"""A peer agent group written with the official A2A Python SDK (a2a-sdk),
and nothing of Countersign's: it signs a task envelope on its own (RFC 8785
canonical JSON via `rfc8785`, Ed25519 via `cryptography`) and sends it with
the SDK's client, which reads Countersign's agent card first.

    a2a_peer.py send BASE_URL SEED_HEX TASK_KEY ORDER_ID [--tamper]
    a2a_peer.py plain BASE_URL SECRET MESSAGE_ID ORDER_ID

`send` signs; `plain` is a plain A2A agent: no envelope, no signature, only
the secret the group's admin issued it as its bearer token and the input as
the message's data part.

Prints one JSON line: the task the group answered with, then the task as
GetTask returns it; or {"error": {...}} with the SDK's error.
"""

import asyncio
import base64
import datetime
import json
import sys
import uuid

import httpx
import rfc8785
from a2a.client import ClientConfig, create_client
from a2a.client.errors import A2AClientError
from a2a.utils.errors import A2AError
from a2a.types import GetTaskRequest, ListTasksRequest, SendMessageRequest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from google.protobuf import json_format

EXTENSION = "https://countersign.dev/a2a/signed-task/v1"
SIGNER = {"group": "support", "key_id": "gateway", "version": 1}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def now_utc() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def envelope(task_key: str, order_id: str) -> dict:
    created = now_utc()
    return {
        "v": 1,
        "task_key": task_key,
        "kind": "returns.inspection",
        "input": {"order_id": order_id},
        "from": "support",
        "to": "returns",
        "root_key": task_key,
        "parent_key": None,
        "route": ["support"],
        "depth": 0,
        "budget": {
            "model_calls": 4,
            "steps": 8,
            "tokens": 8000,
            "money": None,
            # Python spells UTC as +00:00; the signature covers it as sent.
            "deadline": (created + datetime.timedelta(minutes=10)).isoformat(),
        },
        "parent_remaining": None,
        "created": created.isoformat(),
        "nonce": uuid.uuid4().hex,
        "signer": SIGNER,
        "parent": None,
    }


def sign(body: dict, seed: bytes) -> dict:
    key = Ed25519PrivateKey.from_private_bytes(seed)
    header = {"alg": "EdDSA", "kid": "support/gateway/v1", "typ": "countersign-task+jws"}
    protected = b64url(rfc8785.dumps(header))
    signing_input = f"{protected}.{b64url(rfc8785.dumps(body))}".encode()
    return {
        "envelope": body,
        "signature": {"protected": protected, "signature": b64url(key.sign(signing_input))},
    }


def bearer_token(seed: bytes) -> str:
    """A short-lived JWT (EdDSA) for reading our tasks at the returns group."""
    key = Ed25519PrivateKey.from_private_bytes(seed)
    header = b64url(json.dumps({"alg": "EdDSA", "kid": "support/gateway/v1", "typ": "JWT"}).encode())
    issued = int(now_utc().timestamp())
    claims = b64url(json.dumps({"iss": "support", "aud": "returns", "iat": issued,
                                "exp": issued + 60, "jti": uuid.uuid4().hex}).encode())
    signing_input = f"{header}.{claims}"
    return f"{signing_input}.{b64url(key.sign(signing_input.encode()))}"


async def send(
    base_url: str, seed_hex: str, task_key: str, order_id: str, tamper: bool, stream: bool
) -> dict:
    seed = bytes.fromhex(seed_hex)
    signed = sign(envelope(task_key, order_id), seed)
    if tamper:
        signed["envelope"]["budget"]["model_calls"] = 400
    request = json_format.ParseDict(
        {
            "message": {
                "messageId": uuid.uuid4().hex,
                "role": "ROLE_USER",
                "parts": [{"data": {"order_id": order_id}}],
                "extensions": [EXTENSION],
                "metadata": {EXTENSION: signed},
            }
        },
        SendMessageRequest(),
    )
    headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {bearer_token(seed)}"}
    async with httpx.AsyncClient(headers=headers) as http:
        client = await create_client(
            base_url, client_config=ClientConfig(streaming=stream, httpx_client=http)
        )
        try:
            answers = [
                json_format.MessageToDict(answer)
                async for answer in client.send_message(request)
            ]
            # The task comes first, streaming (SendStreamingMessage, then
            # each step) or not (SendMessage).
            task_id = answers[0]["task"]["id"]
            got = await client.get_task(GetTaskRequest(id=task_id))
            listed = await client.list_tasks(ListTasksRequest(context_id=task_key))
            return {
                "sent": answers,
                "got": json_format.MessageToDict(got),
                "listed": json_format.MessageToDict(listed),
            }
        except (A2AClientError, A2AError) as error:
            return {"error": {"type": type(error).__name__, "message": str(error),
                              "data": getattr(error, "data", None)}}


async def plain(base_url: str, secret: str, message_id: str, order_id: str) -> dict:
    request = json_format.ParseDict(
        {
            "message": {
                "messageId": message_id,
                "role": "ROLE_USER",
                "parts": [{"data": {"order_id": order_id}}],
                "metadata": {"kind": "returns.inspection"},
            }
        },
        SendMessageRequest(),
    )
    headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {secret}"}
    async with httpx.AsyncClient(headers=headers) as http:
        client = await create_client(
            base_url, client_config=ClientConfig(streaming=False, httpx_client=http)
        )
        try:
            answers = [
                json_format.MessageToDict(answer)
                async for answer in client.send_message(request)
            ]
            task_id = answers[0]["task"]["id"]
            got = await client.get_task(GetTaskRequest(id=task_id))
            return {"sent": answers, "got": json_format.MessageToDict(got)}
        except (A2AClientError, A2AError) as error:
            return {"error": {"type": type(error).__name__, "message": str(error),
                              "data": getattr(error, "data", None)}}


def main() -> None:
    _, command, base_url, key, task_key, order_id, *flags = sys.argv
    if command == "plain":
        result = asyncio.run(plain(base_url, key, task_key, order_id))
    else:
        assert command == "send", command
        result = asyncio.run(
            send(base_url, key, task_key, order_id, "--tamper" in flags, "--stream" in flags)
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()

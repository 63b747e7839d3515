// Agent groups played in Node for the gateway's browser tests: real
// Ed25519 keys, envelopes and agent cards signed as Countersign signs them
// (JWS EdDSA over the RFC 8785 form), served over real HTTP. What such a
// group does with the tasks it gets is up to the test: here, lie.
import { createHash, generateKeyPairSync, KeyObject, randomUUID, sign } from "node:crypto";
import { createServer, Server } from "node:http";
import { AddressInfo } from "node:net";

export const extension = "https://countersign.dev/a2a/signed-task/v1";

/** RFC 8785 for what envelopes hold: objects, arrays, strings, integers,
 * booleans and null (keys in UTF-16 order, as JavaScript sorts them). */
export function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const fields = value as Record<string, unknown>;
  return `{${Object.keys(fields)
    .sort()
    .filter((key) => fields[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonical(fields[key])}`)
    .join(",")}}`;
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");

/** A group's signing key, version 1 of key id `gateway`. */
export class GroupKey {
  readonly kid: string;
  readonly publicKey: Buffer;
  readonly validFrom = new Date(Date.now() - 60_000).toISOString();
  private readonly privateKey: KeyObject;

  constructor(readonly group: string) {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    this.privateKey = privateKey;
    this.publicKey = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
    this.kid = `${group}/gateway/v1`;
  }

  /** What its admin reads out before the first pin. */
  fingerprint(): string {
    return createHash("sha256").update(this.publicKey).digest("hex");
  }

  private jws(payload: unknown, typ: string) {
    const header = b64url(Buffer.from(canonical({ alg: "EdDSA", kid: this.kid, typ })));
    const input = `${header}.${b64url(Buffer.from(canonical(payload)))}`;
    return { protected: header, signature: b64url(sign(null, Buffer.from(input), this.privateKey)) };
  }

  /** The group's agent card, signed by its key. */
  card(): unknown {
    const card = {
      name: `${this.group} (played by the browser tests)`,
      capabilities: {
        extensions: [{
          uri: extension,
          params: { keys: [{ kid: this.kid, alg: "EdDSA", publicKey: b64url(this.publicKey), validFrom: this.validFrom, usableUntil: null }] },
        }],
      },
    };
    return { ...card, signatures: [this.jws(card, "JOSE")] };
  }

  signed(envelope: Record<string, unknown>) {
    return { envelope, signature: this.jws(envelope, "countersign-task+jws") };
  }

  /** A root task for `to`. */
  root(to: string, taskKey: string, input: unknown) {
    const now = Date.now();
    return this.signed({
      v: 1, task_key: taskKey, kind: "returns.inspection", input, from: this.group, to,
      root_key: taskKey, parent_key: null, route: [this.group], depth: 0,
      budget: { model_calls: 2, steps: 4, tokens: 4000, money: null, deadline: new Date(now + 600_000).toISOString() },
      parent_remaining: null, created: new Date(now).toISOString(), nonce: randomUUID(),
      signer: { group: this.group, key_id: "gateway", version: 1 }, parent: null,
    });
  }

  /** `parent` (a signed envelope this group was sent) passed on to `to`,
   * the route extended honestly: what a group that loops tasks sends. */
  passOn(parent: { envelope: Record<string, any> }, to: string, taskKey: string) {
    const route = [...parent.envelope.route, parent.envelope.to];
    return this.signed({
      v: 1, task_key: taskKey, kind: parent.envelope.kind, input: parent.envelope.input,
      from: this.group, to, root_key: parent.envelope.root_key, parent_key: parent.envelope.task_key,
      route, depth: route.length - 1, budget: parent.envelope.budget,
      parent_remaining: parent.envelope.budget, created: new Date().toISOString(), nonce: randomUUID(),
      signer: { group: this.group, key_id: "gateway", version: 1 }, parent,
    });
  }
}

/** Serves each key's group at `/<group>`: its card, and an A2A endpoint
 * that keeps every request and turns every task down. */
export async function serveGroups(keys: GroupKey[]): Promise<{ base: (group: string) => string; received: any[]; close: () => Promise<void> }> {
  const received: any[] = [];
  const server: Server = createServer((request, response) => {
    const group = keys.find((key) => request.url?.startsWith(`/${key.group}/`));
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (!group) return reply(404, { error: "no such group" });
    if (request.method === "GET" && request.url === `/${group.group}/.well-known/agent-card.json`) {
      return reply(200, group.card());
    }
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const call = JSON.parse(body);
      received.push(call);
      const task = { id: `gtk_${group.group}`, contextId: "x", status: { state: "TASK_STATE_REJECTED" } };
      reply(200, { jsonrpc: "2.0", id: call.id, result: call.method === "SendMessage" ? { task } : task });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: (group) => `http://127.0.0.1:${port}/${group}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// A fake of Google's Security Token Service (sts.googleapis.com/v1/token), the
// endpoint application default credentials of the `external_account` kind
// (workload identity federation) exchange their subject token at, for tests of
// the real google-auth-library flow. It checks the RFC 8693 token-exchange form
// the library posts and answers the access token the fake Vertex accepts.
//
// Why not a service-account key file: google-auth-library sends a service
// account's signed assertion to https://oauth2.googleapis.com/token whatever the
// file's token_uri says (gtoken's URL is a constant), so no test can point that
// flow at a local endpoint. An external_account file's `token_url` is honoured.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { safely, sendJson } from "./fake-media-common.ts";
import { VERTEX_TOKEN } from "./fake-media-vertex.ts";
import { startRecordingServer, type FakeUpstream } from "./recording-server.ts";

export const STS_SUBJECT_TOKEN = "eyJhbGciOiJSUzI1NiJ9.fake-oidc-subject-token.sig";
export const STS_AUDIENCE = "//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/router-tests/providers/local";
const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";

export interface FakeSts extends FakeUpstream {
  /** The path of an external_account credentials file for GOOGLE_APPLICATION_CREDENTIALS. */
  credentialsFile: string;
  /** The token exchanges answered. */
  exchanges(): number;
}

export async function startFakeSts(options: { accessToken?: string; expiresIn?: number } = {}): Promise<FakeSts> {
  let exchanges = 0;
  const server = await startRecordingServer(
    "",
    safely((request, res) => {
      if (request.method !== "POST" || request.path !== "/v1/token") return sendJson(res, 404, { error: "not_found" });
      const form = new URLSearchParams(request.raw.toString("utf8"));
      const problem =
        form.get("grant_type") !== TOKEN_EXCHANGE ? "unsupported_grant_type"
        : form.get("subject_token") !== STS_SUBJECT_TOKEN || form.get("subject_token_type") !== JWT_TOKEN_TYPE ? "invalid_grant"
        : form.get("audience") !== STS_AUDIENCE ? "invalid_target"
        : !(form.get("scope") ?? "").split(" ").includes("https://www.googleapis.com/auth/cloud-platform") ? "invalid_scope"
        : undefined;
      if (problem) return sendJson(res, 400, { error: problem, error_description: `The token exchange was refused (${problem}).` });
      exchanges += 1;
      sendJson(res, 200, {
        access_token: options.accessToken ?? VERTEX_TOKEN,
        issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
        token_type: "Bearer",
        expires_in: options.expiresIn ?? 3600,
      });
    }),
  );
  const folder = mkdtempSync(join(tmpdir(), "router-adc-"));
  const subjectTokenFile = join(folder, "oidc-token");
  writeFileSync(subjectTokenFile, STS_SUBJECT_TOKEN);
  const credentialsFile = join(folder, "application_default_credentials.json");
  writeFileSync(
    credentialsFile,
    JSON.stringify({
      type: "external_account",
      audience: STS_AUDIENCE,
      subject_token_type: JWT_TOKEN_TYPE,
      token_url: `${server.url}/v1/token`,
      credential_source: { file: subjectTokenFile },
    }),
  );
  return { ...server, credentialsFile, exchanges: () => exchanges };
}

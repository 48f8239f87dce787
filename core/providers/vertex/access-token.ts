// Vertex AI takes an OAuth2 access token (scope cloud-platform). It comes from
// the provider's `api_key_env` when that variable is set (a token minted
// elsewhere, `gcloud auth print-access-token`), else from Google's application
// default credentials through google-auth-library, which reads the file
// GOOGLE_APPLICATION_CREDENTIALS names (a service account key, a workload
// identity federation config), gcloud's own login, or the metadata server of a
// Google Cloud runtime, and renews the token before it expires.
import { GoogleAuth } from "google-auth-library";
import { UpstreamError } from "../types.ts";

const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/**
 * The bearer token of one call: the configured key, else one from the
 * application default credentials (cached and renewed by the library). `project`
 * is the project of the provider's base_url.
 */
export type AccessTokens = (apiKey: string, project: string) => Promise<string>;

export function createAccessTokens(): AccessTokens {
  // One client per project, made at its first call without a key: a deployment that sets the key never touches ADC.
  const clients = new Map<string, GoogleAuth>();
  return async (apiKey, project) => {
    if (apiKey) return apiKey;
    let auth = clients.get(project);
    if (!auth) {
      // Naming the project spares the library its own search for one (for workload identity
      // federation, a Cloud Resource Manager call that needs a permission the token does not).
      auth = new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE], ...(project && { projectId: project }) });
      clients.set(project, auth);
    }
    let token: string | null | undefined;
    try {
      token = await auth.getAccessToken();
    } catch (error) {
      // A token endpoint down or a file being rotated: tried again at the next poll, as any provider failure.
      throw new UpstreamError(`Google application default credentials gave no access token: ${(error as Error).message}`, { retryable: true, reason: "credentials", cause: error });
    }
    if (!token) throw new UpstreamError("Google application default credentials gave no access token", { retryable: true, reason: "credentials" });
    return token;
  };
}

/** The project of a base URL ending in /v1/projects/{project}/locations/{location}; "" when it names none. */
export function projectOf(baseUrl: string): string {
  return /\/projects\/([^/]+)\//.exec(baseUrl)?.[1] ?? "";
}

/**
 * Whether application default credentials are configured where the catalogue
 * can see it: GOOGLE_APPLICATION_CREDENTIALS names a credentials file. (gcloud's
 * login and the metadata server are found only by asking; a provider that
 * names no `api_key_env` is always enabled and uses them.)
 */
export function applicationDefaultCredentialsConfigured(env: Readonly<Record<string, string | undefined>>): boolean {
  return (env.GOOGLE_APPLICATION_CREDENTIALS ?? "") !== "";
}

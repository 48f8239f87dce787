// Reasoning signatures in formats whose clients send them back (Messages, Interactions).
import type { ResponseStart } from "../../../gen/router/v1/inference_pb.js";

/**
 * A signature (or sealed reasoning) as a format hands it out: the native
 * protocol's as it is, so that it goes back upstream byte for byte; another
 * protocol's prefixed with that protocol (`gemini:<signature>`), so that when
 * a client sends it back the core knows whose it is and never sends it to a
 * provider that would refuse it (signerOfSignature reads the prefix back).
 */
export function signatureOf(signature: string, { protocol, nativeFormat }: Signer): string {
  return nativeFormat || protocol === "" ? signature : `${protocol}${SIGNER_SEPARATOR}${signature}`;
}

/** Who served: the start's protocol, and whether it speaks the format's own wire. */
export type Signer = Pick<ResponseStart, "protocol" | "nativeFormat">;

const SIGNER_SEPARATOR = ":";
const SIGNED_BY = /^([a-z][a-z0-9-]*):/;

/** A signature sent back: the protocol that made it (empty: the native protocol's or unknown) and the signature itself. */
export function signerOfSignature(value: string): { signedBy: string; signature: string } {
  const signer = SIGNED_BY.exec(value);
  return signer ? { signedBy: signer[1], signature: value.slice(signer[0].length) } : { signedBy: "", signature: value };
}

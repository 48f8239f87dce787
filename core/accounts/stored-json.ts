// Records the Redis stores keep as protobuf JSON (tasks, conversation turns).
// Written well-formed, so a lone surrogate that slipped in (a provider's text)
// cannot make a record protobuf-es refuses to read back ("invalid UTF8"); read
// back the same way, so a record written before that rule is still read; a
// record that cannot be read at all is an UnreadableRecordError, never an outage.
import { fromJson, fromJsonString, toJson, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { makeWellFormed, mayHoldLoneSurrogate } from "../../wire/well-formed.ts";
import { UnreadableRecordError } from "./store-errors.ts";

export function storedJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): string {
  const value = toJson(schema, message);
  const json = JSON.stringify(value);
  // JSON.stringify writes a lone surrogate as its escape: only then is the record walked.
  return mayHoldLoneSurrogate(json) ? JSON.stringify(makeWellFormed(value)) : json;
}

/** The record, or UnreadableRecordError naming it (`record`, for example "task tsk_1"). */
export function readStoredJson<Desc extends DescMessage>(schema: Desc, json: string, record: string): MessageShape<Desc> {
  try {
    return fromJsonString(schema, json);
  } catch (error) {
    try {
      return fromJson(schema, makeWellFormed(JSON.parse(json)));
    } catch {
      throw new UnreadableRecordError(`the stored ${record} cannot be decoded`, { cause: error });
    }
  }
}

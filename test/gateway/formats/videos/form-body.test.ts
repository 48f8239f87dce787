// videos.create's multipart form made into the JSON body's shape
// (videos/form-body.ts): a field whose name an object inherits (constructor,
// toString, __proto__) is a field like any other, given once, then refused by
// name as the JSON body's unknown fields are; a field sent twice is refused.
import { describe, expect, it } from "vitest";
import { ConnectError } from "../../../../core/errors.ts";
import { decodeVideoRequest } from "../../../../gateway/formats/videos/decode-request.ts";
import { videoBodyOfForm } from "../../../../gateway/formats/videos/form-body.ts";

function formOf(fields: [string, string][]): FormData {
  const form = new FormData();
  for (const [name, value] of fields) form.append(name, value);
  return form;
}

/** The message of the 400 the form gets, from the form reader or the body's checks after it. */
function refusal(form: FormData): string {
  try {
    decodeVideoRequest(videoBodyOfForm(form), "sk-test", "", "http://gateway");
  } catch (error) {
    if (!(error instanceof ConnectError)) throw error;
    return error.rawMessage;
  }
  throw new Error("the form was accepted");
}

describe("a video form's field names", () => {
  it.each(["constructor", "toString", "__proto__", "hasOwnProperty"])("takes a field named %s once, then refuses it as an unknown field (not as given twice)", (name) => {
    const message = refusal(formOf([["model", "m/video"], ["prompt", "a wave"], [name, "x"]]));
    expect(message).not.toContain("given twice");
    expect(message).toContain(name);
  });

  it("leaves the body's prototype alone: a __proto__ field is the body's own", () => {
    const body = videoBodyOfForm(formOf([["__proto__", "x"], ["prompt", "a wave"]]));
    expect(Object.hasOwn(body, "__proto__")).toBe(true);
    expect(Object.keys(body)).toEqual(["__proto__", "prompt"]);
  });

  it("refuses a field given twice", () => {
    expect(() => videoBodyOfForm(formOf([["prompt", "a"], ["prompt", "b"]]))).toThrow("prompt is given twice.");
  });
});

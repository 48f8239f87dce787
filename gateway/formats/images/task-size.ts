// An image task's `size` as the spec means it, the image's dimensions: the
// size asked (`WIDTHxHEIGHT`, what the provider was told to make); when none
// was, those the first image delivered has (read from its bytes by the core),
// and undefined until then (the provider chooses).
import type { Task } from "../../../gen/router/v1/tasks_pb.js";

export function imageSizeOf(task: Task): string | undefined {
  const asked = task.image?.size;
  if (asked && asked !== "auto") return asked;
  const delivered = task.outputs.find((output) => output.width > 0 && output.height > 0);
  return delivered ? `${delivered.width}x${delivered.height}` : undefined;
}

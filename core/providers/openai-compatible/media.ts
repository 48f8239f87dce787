// The openai-compatible protocol's media jobs (core/providers/media-job.ts):
// images through OpenAI's synchronous images API, videos through OpenAI's
// videos API (submit, poll, download with the key). docs/media-protocols.md.
import { VideoResultStyle } from "../../../gen/router/v1/tasks_pb.js";
import type { MediaJobAdapter } from "../media-job.ts";
import { lostImageAnswer, OPENAI_IMAGE_PARAMETERS, submitOpenAiImages, SYNCHRONOUS_IMAGE_JOB } from "./media-images.ts";
import { OPENAI_VIDEO_PARAMETERS, pollOpenAiVideo, submitOpenAiVideo } from "./media-videos.ts";

/** OpenAI's own limit on `n` for image generation. */
const OPENAI_IMAGES_PER_REQUEST = 10;
/** OpenAI's limit on the images of one edit. */
const OPENAI_EDIT_IMAGES = 16;

export function createOpenAiCompatibleMediaAdapter(): MediaJobAdapter {
  return {
    maxImagesPerJob: OPENAI_IMAGES_PER_REQUEST,
    // GPT image models edit up to 16 images at once (the SDK's ImageEditParams.image).
    maxEditImages: OPENAI_EDIT_IMAGES,
    imageParameters: OPENAI_IMAGE_PARAMETERS,
    synchronousImages: true,
    videoParameters: OPENAI_VIDEO_PARAMETERS,
    videoResultStyle: VideoResultStyle.PROGRESS,
    submitImage: submitOpenAiImages,
    submitVideo: submitOpenAiVideo,
    async poll(call, job) {
      // An image job's answer came with its submission; a poll means it was lost.
      if (job.pollingUrl === SYNCHRONOUS_IMAGE_JOB) return lostImageAnswer();
      return pollOpenAiVideo(call, job);
    },
  };
}

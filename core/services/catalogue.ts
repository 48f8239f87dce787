// The catalogue is fixed for the life of the process, so its messages are built
// once at start and every call answers from memory. The routes' measurements
// change: an answer naming provider entries gets them added at each call
// (from memory too), and is built anew only once some route has any.
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  GetModelResponseSchema,
  ListModelsResponseSchema,
  ListProviderEntriesResponseSchema,
  type CatalogueService,
} from "../../gen/router/v1/catalogue_pb.js";
import type { Catalogue } from "../catalogue/catalogue.ts";
import type { MediaAdapters } from "../catalogue/media-parameters.ts";
import { modelToProto, providerEntryToProto } from "../catalogue/to-proto.ts";
import { Code, echoed, routerError } from "../errors.ts";
import type { MeasurementsView } from "../route-stats/measurements.ts";
import { withMeasurements } from "./measured-entries.ts";

/** `mediaAdapters`: the task service's, whose parameters a media model lists. */
export function createCatalogueService(catalogue: Catalogue, mediaAdapters: MediaAdapters, measurements?: MeasurementsView): ServiceImpl<typeof CatalogueService> {
  const models = catalogue.models.map((model) => ({
    model: modelToProto(model, mediaAdapters),
    entries: model.routes.map((route) => providerEntryToProto(model, route, mediaAdapters)),
  }));
  const byId = new Map(
    models.map((m) => [m.model.id, create(GetModelResponseSchema, { model: m.model, providerData: m.entries })]),
  );
  const listModels = create(ListModelsResponseSchema, { models: models.map((m) => m.model) });
  const listEntries = create(ListProviderEntriesResponseSchema, { entries: models.flatMap((m) => m.entries) });
  return {
    listModels: () => listModels,
    listProviderEntries: () => {
      const entries = withMeasurements(listEntries.entries, measurements);
      return entries === listEntries.entries ? listEntries : create(ListProviderEntriesResponseSchema, { entries });
    },
    getModel(request) {
      const found = byId.get(request.id);
      if (!found) throw routerError(Code.NotFound, "model_not_found", `Model ${echoed(request.id)} is not in the catalogue.`, { param: "id" });
      const providerData = withMeasurements(found.providerData, measurements);
      return providerData === found.providerData ? found : create(GetModelResponseSchema, { model: found.model, providerData });
    },
  };
}

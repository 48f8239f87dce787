// Account stores whose admission runs (the hold is taken) but whose reply is
// lost while `lost()` says so: the store answers StoreUnavailableError, as a
// Redis connection dropped after the script ran would.
import { StoreUnavailableError } from "../../core/accounts/store-errors.ts";
import type { AccountStores } from "../../core/accounts/store.ts";

export function losingAdmissionReplies(stores: AccountStores, lost: () => boolean): AccountStores {
  return {
    ...stores,
    admission: {
      ...stores.admission,
      admit: async (request) => {
        const admission = await stores.admission.admit(request);
        if (lost()) throw new StoreUnavailableError("connection lost");
        return admission;
      },
    },
  };
}

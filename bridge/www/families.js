// The robot families the page has a panel for, by hello's "robot": each
// module's row says where its readings go, how it shows a sensor message,
// what the programs on its own port are called and how it drives (the rows'
// fields are family-any.js's). The rest of the page names no family; a
// family with no row here gets anyFamily: its readings as they come.
import { anyFamily } from "./family-any.js";
import { flockbot } from "./family-flockbot.js";
import { pioneer } from "./family-pioneer.js";
import { smr } from "./family-smr.js";

const FAMILIES = { flockbot, pioneer, smr };

/** The row of the family named `name`, or anyFamily. */
export function familyRow(name) {
  return Object.hasOwn(FAMILIES, name) ? FAMILIES[name] : anyFamily;
}

/** Whether the page has a panel of its own for `name`. */
export function hasPanel(name) {
  return Object.hasOwn(FAMILIES, name);
}

/** Every row, for what each must hear (another bridge's run). */
export const everyFamily = [...Object.values(FAMILIES), anyFamily];

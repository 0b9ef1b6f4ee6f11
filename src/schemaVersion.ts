/**
 * The versions of what troupe stores: the one place they are set. Each stored thing carries its version in a
 * `schemaVersion` field; one written before the field existed reads as version 1. A version below the current one is
 * a format this code still reads (and writes anew in the current one); a version above it comes from a newer troupe
 * and is refused with {@link UnsupportedSchemaError}, the file left as it is.
 *
 * Raise a version when the stored shape changes in a way older code would misread, keep reading the older versions,
 * and add a fixture of the new format under `test/fixtures/`. A new value of a closed list that is stored (an error
 * `code`, an event `type`, a failure `reason`) is such a change too: older code refuses a recording that holds one.
 */

/**
 * The format of a `JsonFileMemory` file: one JSON object of keys, with `schemaVersion` beside them at its top
 * level (a reserved key). Version 1; files written before the field have the same layout and read as version 1.
 */
export const STORE_SCHEMA_VERSION = 1;

/**
 * The format of a session record in `__agent_sessions__` (see `SessionRecord`). Version 4: a failed session's `reason`
 * (and its error's `code`) may be `required_tools` (its turns ran out before it called its `requiredToolCalls`). Version 3: a record names its
 * `owner` process and may be `interrupted` (its process died while it ran); error codes of model calls
 * (`model_call_failed`, `invalid_script_step`) may appear. Version 2: a failed session's `error` is an `ErrorInfo`
 * (`{ code, message, fault, … }`). Version 1 had it as a text, read with the code its reason implies; records written
 * before the field are version 1.
 */
export const SESSION_SCHEMA_VERSION = 4;

/**
 * The format of a `record` file (JSON lines): a header line `{"type":"recording","schemaVersion":7,"runId":…}`, then
 * one event a line. Version 7: events may be `tool.wait_ended` (a tool call's wait for messages ended: its outcome,
 * status and duration), and a `tool.result` may be `waiting` (the call waits for messages). Version 6: an `agent.failed` event's `reason` and its error's `code` may be `required_tools`, a
 * `tool.denied` event's `reason` may be `denied` (a tool policy or a person refused the call), and `approval.*` events
 * may be about a tool call (`tool`, `category`, `callId` on `approval.requested`). Version 5: events may be `todo.updated` (an agent wrote its todo list) and `tool.plan` (a turn's tool calls as planned: stages and why calls wait). Version 4: events may be `agent.restarted` (a failed agent started again) and `agent.escalated` (a
 * failure past its restarts), and `agent.spawned` may carry an `attempt`. Version 3: events may be `model.retry` (a failed model call tried again), which older code does not
 * know. Version 2: an `agent.failed` event's `error` is an `ErrorInfo` (`{ code, message, fault, … }`). Version 1 had
 * the error as a text; a file without the header (written before it) is events only and reads as version 1. All are
 * read, their failures given the code their reason implies.
 */
export const RECORDING_SCHEMA_VERSION = 7;

/**
 * The format of a long-term note in `__agent_notes__` (see `Note`, `memory_save`), a field of each note. Version 1;
 * a note of a newer version is left out of lists and searches, and never rewritten.
 */
export const NOTE_SCHEMA_VERSION = 1;

/** What a `schemaVersion` field says: a version this code reads, a newer one, or no version at all. */
export type SchemaVersionCheck =
  | { status: 'known'; version: number }
  | { status: 'newer'; version: number }
  | { status: 'invalid'; found: unknown };

/** Reads a `schemaVersion` field against the newest version this code knows; a missing field is version 1. */
export function checkSchemaVersion(found: unknown, supported: number): SchemaVersionCheck {
  if (found === undefined) return { status: 'known', version: 1 };
  if (typeof found !== 'number' || !Number.isSafeInteger(found) || found < 1) return { status: 'invalid', found };
  return found > supported ? { status: 'newer', version: found } : { status: 'known', version: found };
}

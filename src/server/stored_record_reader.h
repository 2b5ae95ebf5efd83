// The quick reading of the records the server stores (job_record.h): a job record and a task
// record exactly as EncodeJobRecord and EncodeTaskRecord write them, read straight from their
// JSON text (spec/json_reader.h) without building a JSON tree — the restart path, where every
// stored record is read. Anything else (a record with its tasks inline, as the oldest
// versions wrote it, a value nlohmann-json would convert, a corrupt one) is refused with false, and
// the caller reads the record through nlohmann-json as every version wrote it; so each text decodes
// to the same record either way. Also the names of the stored preemption actions. Pure functions;
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "server/job_record.h"

namespace tessera::server {

// "" (none), "requeue", "cancel", "drain", "taint": the stored name of `action`.
std::string_view PreemptionName(control::Eviction action);
// The action of a stored name; nullopt for an unknown one.
std::optional<control::Eviction> FindPreemption(std::string_view name);

// Reads a job record's fields into `record` and `status`, and the JSON text of the spec it holds
// inline (an older version's record) into `document`, decoded by the caller. False when `value`
// is not exactly what our encoder writes or an older version wrote.
bool ReadFieldsQuickly(std::string_view value, JobRecord& record, spec::JobStatus& status,
                       std::optional<std::string>& document);
// Reads a task record into `task`. False when `value` is not exactly our encoder's output.
bool ReadTaskQuickly(std::string_view value, TaskRuntime& task);

}  // namespace tessera::server

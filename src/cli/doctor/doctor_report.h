#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/doctor/doctor_diagnosis.h"

namespace metrics_adapter::cli {

// One screen per HPA for a person: the cause (or "ok") first, then the replicas against the
// HPA's own status, then each metric from the request the controller sends to the values.
void writeDoctorText(std::ostream& out, const std::vector<HpaDiagnosis>& diagnoses);

// The same facts for scripts: {"hpas": [...], "ok": bool}.
nlohmann::json doctorJson(const std::vector<HpaDiagnosis>& diagnoses);

}  // namespace metrics_adapter::cli

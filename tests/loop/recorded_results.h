#pragma once
// Results the real runner recorded on a GPU, replayed by the runner double (KL_MODEL_RUNNER_RECORDED):
// the device it described and what each job measured, so that a test without a GPU sees the figures
// an H200 gave instead of made-up ones. Read from a recorded reply (tests/fixtures/findings/*-h200.json)
// or from a recorded session (resources/sessions/*.klsession, opened read-only through store::Store,
// its first session's results in iteration order).
#include "core/protocol/messages.h"

#include <map>
#include <string>
#include <vector>

namespace kl::test {

class RecordedResults {
public:
    // Throws std::runtime_error naming the file when it holds no recorded result.
    static RecordedResults load(const std::string& path);

    const protocol::DeviceDescription& device() const { return m_device; }

    // The reply to `request`: its id, case labels and bytes, with the recorded figures of the result
    // this job's cubin is given (see resultFor). `device` is the description to send (index, name).
    protocol::EvaluateResult answer(
        const protocol::EvaluateRequest& request, const protocol::DeviceDescription& device);

private:
    // The baseline's cubin gets iteration 1's result; each cubin not seen before gets the next passed
    // iteration's, in order, wrapping around; the same cubin always gets the same one.
    const protocol::EvaluateResult& resultFor(const std::string& cubin, bool baseline);

    protocol::DeviceDescription m_device;
    std::vector<protocol::EvaluateResult> m_results; // [0]: iteration 1; then the passed ones in order
    std::map<std::string, std::size_t> m_given; // contentHash of a cubin -> index into m_results
    std::size_t m_next = 1;
};

} // namespace kl::test

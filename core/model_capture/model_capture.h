#pragma once
// What `kernelloop-cli model` captures from a model file, as typed values: the model, the way its graph
// was recorded (torch.fx, fx with leaf modules, or module hooks and aten ops), each operator with its
// tensors at the model's own shapes, and the fusion candidates. Decoded once from the helper's reply
// (capture_json.h); everything else reads these fields.
#include <cstdint>
#include <string>
#include <vector>

namespace kl::model_capture {

struct TensorInfo {
    bool isTensor = true; // false: a non-tensor argument (`value` holds its text)
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> stride;
    std::string dtype; // f32, f16, ..., "bool", "other"
    std::string role; // activation | parameter | buffer | constant
    std::string path; // the model's tensor a weight is ("features.0.weight")
    std::string value;
};

struct Operator {
    std::string id; // fx node name, "module.path#call", or "aten#N"
    std::string label; // "features.0 (Conv2d)", "torch.relu", "aten.bmm.default"
    std::string kind; // matmul | conv | attention | rnn | norm | reduction | elementwise | data-movement | other
    std::vector<TensorInfo> inputs;
    std::vector<TensorInfo> outputs;
    double flops = 0.0; // at the model's shapes, counted from the aten ops it ran (model_cost.py's rules)
    double bytes = 0.0; // every tensor read and written once
    bool matrixProduct = false;
    bool view = false; // moves no data (a view of its input)
    bool mutatesInputs = false;
    std::vector<std::string> random; // random aten ops it ran
    bool hasActivationInput() const;
};

struct ModelInfo {
    std::string name; // the file's stem
    std::string file;
    std::string spec; // kernelbench | module
    std::string weights; // "seeded random (...)" or "the model's own (get_model())"
    std::string mode; // training | eval
    int seed = 0;
    std::string torchVersion;
    std::vector<TensorInfo> inputs;
    std::vector<TensorInfo> outputs;
    double forwardMs = 0.0; // CPU call time of one forward where the helper ran: context, not a GPU figure
    std::int64_t parameters = 0;
};

struct Capture {
    ModelInfo model;
    std::string method; // fx | fx-leaf-modules | module-hooks
    std::string note; // which, and why the simpler ways did not work
    std::vector<Operator> operators; // in the order the forward ran them
    std::vector<std::vector<std::string>> fusion; // operator ids: a head (matmul/conv/norm) and its element-wise chain
    const Operator* find(const std::string& id) const;
};

// How a problem draws one input (problem.json's "distribution").
struct Distribution {
    std::string kind = "normal"; // normal (first = mean, second = std) | uniform (low, high) | integers (low, high)
    double first = 0.0;
    double second = 1.0;
};

struct ProblemTensor {
    std::string name;
    std::string dtype;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> stride; // as captured: the guard's second accepted layout
    std::string role; // inputs: activation | parameter | buffer | constant
    std::string weight; // the model tensor a weight input stands for
    Distribution distribution; // inputs only
};

// One problem the helper wrote from a group of operators: its reference and the captured tensors.
struct ProblemDraft {
    std::string name;
    std::vector<std::string> ops;
    std::vector<ProblemTensor> inputs;
    std::vector<ProblemTensor> outputs;
    double flops = 0.0;
    double bytes = 0.0;
    bool matrixProduct = false;
    std::string referenceSource;
    double checkedMaxDiff = 0.0; // the reference on the captured inputs against the model's values
    std::vector<std::string> copiedInputs;
    std::string patchMode; // graph | module | none
    std::string patchWhy; // none: why it cannot be put back
    std::string patchSpec; // where it goes in the model, as the helper wrote it; read by the patch module only
};

struct ProblemRefusal {
    std::string name;
    std::string category;
    std::string message;
};

struct ProblemsReply {
    std::string method;
    std::vector<ProblemDraft> problems;
    std::vector<ProblemRefusal> refused;
};

} // namespace kl::model_capture

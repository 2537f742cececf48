#include "ortkit/runtime/capabilities.h"

#include <onnx/onnx_pb.h>

namespace ortkit {
namespace {

constexpr int kHighestProbedOpset = 30;

// y = Identity(x) over float[1], stamped with `opset`. IR version 8 is old enough for every
// runtime of the last years and ONNX Runtime does not tie IR versions to opsets, so only the
// opset decides whether the session loads.
std::string IdentityModel(int opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("ortkit-opset-probe");
  auto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  auto* graph = model.mutable_graph();
  graph->set_name("probe");
  auto* node = graph->add_node();
  node->set_op_type("Identity");
  node->add_input("x");
  node->add_output("y");
  for (auto* value : {graph->add_input(), graph->add_output()}) {
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_value(1);
  }
  graph->mutable_input(0)->set_name("x");
  graph->mutable_output(0)->set_name("y");
  return model.SerializeAsString();
}

}  // namespace

int ProbeMaxSupportedOpset(Runtime& runtime) {
  SessionConfig config;
  config.optimization_level = OptimizationLevel::kOff;  // nothing to optimise; skip the work
  config.intra_op_threads = 1;
  config.enable_cpu_arena = false;
  for (int opset = kHighestProbedOpset; opset >= 1; --opset) {
    if (Session::CreateFromBytes(runtime, IdentityModel(opset), config).ok()) return opset;
  }
  return 0;
}

}  // namespace ortkit

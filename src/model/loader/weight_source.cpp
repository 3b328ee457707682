#include "model/loader/weight_source.h"

namespace tandem::model {
namespace {

Status CheckPresentWithShape(const WeightSource& source, const std::string& name,
                             const tensor::Shape& expected) {
  if (!source.HasTensor(name)) {
    return InvalidArgument("weight '" + name + "' is missing from " + source.source_name() +
                           " (expected shape " + tensor::ShapeToString(expected) + ")");
  }
  TANDEM_ASSIGN_OR_RETURN(tensor::Shape shape, source.TensorShape(name));
  if (shape != expected) {
    return InvalidArgument("weight '" + name + "' in " + source.source_name() + " has shape " +
                           tensor::ShapeToString(shape) + "; expected " +
                           tensor::ShapeToString(expected));
  }
  return Status::Ok();
}

}  // namespace

Result<tensor::Tensor> CastingWeightSource::ReadStored(const std::string& name) const {
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor t, inner_.ReadStored(name));
  // An int8 weight keeps its int8 (vLLM's --dtype sets the unquantized parameters' dtype).
  if (t.dtype() == dtype_ || t.int8_quant() != nullptr) return t;
  return t.To(dtype_);
}

Result<tensor::Tensor> LoadStoredWeight(const WeightSource& source, const std::string& name,
                                        const tensor::Shape& expected) {
  TANDEM_RETURN_IF_ERROR(CheckPresentWithShape(source, name, expected));
  return source.ReadStored(name);
}

}  // namespace tandem::model

// The addon, through the loader @napi-rs/cli generates (binding.cjs picks the platform binary:
// a local bsrmm.<platform>.node or the bsrmm-<platform> package). The build copies native/
// next to dist/esm and dist/cjs so this relative path holds in both outputs.
import binding from "../native/binding.cjs";

export default binding;
export type { NativeBsrMatrix, NativeEpilogue, NativeMatmulOptions, NativeTensor } from "../native/binding.cjs";

// Library-wide entry points: version, status names, the thread-local last error, CUDA
// availability and the variant list.
#include <bsrmm/bsrmm.h>

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

namespace {

TEST(Library, VersionMatchesTheHeader) {
  const std::string expected = std::to_string(BSRMM_VERSION_MAJOR) + "." + std::to_string(BSRMM_VERSION_MINOR) +
                               "." + std::to_string(BSRMM_VERSION_PATCH);
  EXPECT_EQ(bsrmm_version(), expected);
}

TEST(Library, StatusNamesAreTheEnumeratorNames) {
  EXPECT_STREQ(bsrmm_status_name(BSRMM_STATUS_SUCCESS), "BSRMM_STATUS_SUCCESS");
  EXPECT_STREQ(bsrmm_status_name(BSRMM_STATUS_INVALID_ARGUMENT), "BSRMM_STATUS_INVALID_ARGUMENT");
  EXPECT_STREQ(bsrmm_status_name(BSRMM_STATUS_UNSUPPORTED), "BSRMM_STATUS_UNSUPPORTED");
  EXPECT_STREQ(bsrmm_status_name(BSRMM_STATUS_OUT_OF_MEMORY), "BSRMM_STATUS_OUT_OF_MEMORY");
  EXPECT_STREQ(bsrmm_status_name(BSRMM_STATUS_NO_DEVICE), "BSRMM_STATUS_NO_DEVICE");
  EXPECT_STREQ(bsrmm_status_name(BSRMM_STATUS_CUDA_ERROR), "BSRMM_STATUS_CUDA_ERROR");
  EXPECT_STREQ(bsrmm_status_name(BSRMM_STATUS_INTERNAL), "BSRMM_STATUS_INTERNAL");
  EXPECT_STREQ(bsrmm_status_name(BSRMM_STATUS_IO_ERROR), "BSRMM_STATUS_IO_ERROR");
  EXPECT_STREQ(bsrmm_status_name(static_cast<bsrmm_status>(99)), "BSRMM_STATUS_UNKNOWN");
}

TEST(Library, LastErrorIsPerThreadAndNamesTheFunction) {
  bsrmm_context_t ctx = nullptr;
  ASSERT_EQ(bsrmm_context_create({BSRMM_DEVICE_CPU, 3}, &ctx), BSRMM_STATUS_INVALID_ARGUMENT);
  const std::string here = bsrmm_last_error();
  EXPECT_EQ(here, "bsrmm_context_create: device.ordinal = 3 for a CPU device, must be 0");
  std::string there = "unset";
  std::thread([&] { there = bsrmm_last_error(); }).join();
  EXPECT_EQ(there, "") << "another thread has its own last error";
  EXPECT_EQ(std::string(bsrmm_last_error()), here);
}

TEST(Library, CudaAvailabilityIsReportedCleanly) {
  EXPECT_EQ(bsrmm_cuda_compiled(), BSRMM_WITH_CUDA ? 1 : 0);
  int32_t count = -1;
  const bsrmm_status status = bsrmm_cuda_device_count(&count);
  if (!BSRMM_WITH_CUDA) {
    EXPECT_EQ(status, BSRMM_STATUS_NO_DEVICE);
    EXPECT_EQ(count, 0);
    EXPECT_NE(std::string(bsrmm_last_error()).find("bsrmm was built without CUDA"), std::string::npos);
  } else if (status == BSRMM_STATUS_SUCCESS) {
    EXPECT_GT(count, 0);
  } else {
    EXPECT_EQ(status, BSRMM_STATUS_NO_DEVICE);
    EXPECT_EQ(count, 0);
    EXPECT_GT(std::string(bsrmm_last_error()).size(), std::string("bsrmm_cuda_device_count: ").size())
        << "the reason must be given";
  }
  EXPECT_EQ(bsrmm_cuda_device_count(nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("count is NULL"), std::string::npos);
}

TEST(Library, VariantListHasTheCpuVariantsAndUniqueNames) {
  const int32_t count = bsrmm_variant_count();
  ASSERT_GE(count, 2);
  std::set<std::string> names;
  for (int32_t i = 0; i < count; ++i) {
    const char* name = bsrmm_variant_name(i);
    ASSERT_NE(name, nullptr);
    EXPECT_TRUE(names.insert(name).second) << "duplicate variant " << name;
  }
  EXPECT_EQ(names.count("cpu_reference_f64acc"), 1u);
  EXPECT_EQ(names.count("cpu_blocked_simd"), 1u);
  EXPECT_EQ(bsrmm_variant_name(count), nullptr);
  EXPECT_NE(std::string(bsrmm_last_error()).find("index = " + std::to_string(count) + " is outside"),
            std::string::npos);
  EXPECT_EQ(bsrmm_variant_name(-1), nullptr);
}

}  // namespace

// The development switches' parsing (core/env.h): a malformed value must not crash or register surprises.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "core/env.h"
#include "registry/registry.h"
#include "tgemm/kernel.h"

namespace tgemm {
namespace {

TEST(Env, IntListTakesCommasAndColons) {
  ::setenv("TGEMM_TEST_LIST", "0,2:6", 1);
  EXPECT_EQ(env_int_list("TGEMM_TEST_LIST"), (std::vector<int>{0, 2, 6}));
  ::setenv("TGEMM_TEST_LIST", "7", 1);
  EXPECT_EQ(env_int_list("TGEMM_TEST_LIST"), (std::vector<int>{7}));
  ::setenv("TGEMM_TEST_LIST", "3,x,5", 1);  // stops at what is not a number
  EXPECT_EQ(env_int_list("TGEMM_TEST_LIST"), (std::vector<int>{3}));
  ::setenv("TGEMM_TEST_LIST", "", 1);
  EXPECT_TRUE(env_int_list("TGEMM_TEST_LIST").empty());
  ::unsetenv("TGEMM_TEST_LIST");
  EXPECT_TRUE(env_int_list("TGEMM_TEST_LIST").empty());
}

// The sm90 development twins exist only on request (TGEMM_SM90_{L2,SPLIT,ROWS}_TWINS, unset in the tests): no
// registered kernel carries their suffixes, so a tuned table can never name one. (The sanitizer builds leave the CUDA
// backends out, so the registry may hold no sm90 kernel at all.) ctest's cli_explain_sm90_twin_* run them on request.
TEST(Env, NoSm90TwinsByDefault) {
  for (const char* var : {"TGEMM_SM90_L2_TWINS", "TGEMM_SM90_SPLIT_TWINS", "TGEMM_SM90_ROWS_TWINS"})
    ASSERT_EQ(std::getenv(var), nullptr) << var;
  ASSERT_FALSE(Registry::get().all().empty());
  const std::regex twin("_l2h[0-9]|_sk[0-9]+_i|_rows[0-9]");
  for (const Kernel* k : Registry::get().all())
    if (k->backend() == Backend::sm90) EXPECT_FALSE(std::regex_search(k->name(), twin)) << k->name();
}

}  // namespace
}  // namespace tgemm

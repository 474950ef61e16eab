// Typed colocated calls: a method called through its member pointer (`obj.call(&T::m, x)`,
// `obj.method(&T::m)`), its signature taken from the pointer and the arguments checked at compile
// time; one function registered with several signatures for an overloaded body (an array or a
// tree of them, as JAX's add_one); constructor arguments of any type, host arrays included.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <type_traits>
#include <vector>
#include "support/colocated_values.hpp"
#include "support/cpu_options.hpp"

namespace {

using am::testing::value_of;

using typed_list = std::vector<am::array>;

/// A class whose constructor takes a host array (JAX's `Value(np.array(5))`) and whose methods
/// take an array, two arrays, a tree, or nothing.
struct typed_value {
  explicit typed_value(am::host_array v) : value(std::move(v)) {}
  am::array plus(const am::array& x) const { return x + value.item<int>(); }
  am::array sum(const am::array& a, const am::array& b) { return a + b + value.item<int>(); }
  typed_list each_plus(const typed_list& xs) {
    typed_list out;
    for (auto& x : xs)
      out.push_back(x + value.item<int>());
    return out;
  }
  am::array unregistered(const am::array& x) { return x; }
  am::host_array value;
};

const auto typed_value_class = am::colocated_python_class<typed_value>("test.typed.value")
                                 .def("plus", &typed_value::plus)
                                 .def("sum", &typed_value::sum)
                                 .def("each_plus", &typed_value::each_plus);

/// An overloaded body: an array, or a list of arrays.
struct typed_add_one_body {
  am::array operator()(const am::array& x) const { return x + 1; }
  typed_list operator()(const typed_list& xs) const {
    typed_list out;
    for (auto& x : xs)
      out.push_back(x + 1);
    return out;
  }
};

const auto typed_add_one = am::colocated_python<am::array(am::array), typed_list(typed_list)>(
  "test.typed.add_one", typed_add_one_body{});

/// A templated body with one signature per leaf type the program uses.
const auto typed_twice = am::colocated_python<am::array(am::array), std::pair<am::array, am::array>(am::array, am::array)>(
  "test.typed.twice", [](const auto&... x) {
    if constexpr (sizeof...(x) == 1)
      return std::get<0>(std::tuple{(x * 2)...});
    else
      return std::pair{(x * 2)...};
  });

} // namespace

// What the compiler refuses, said as requirements that must hold (a static_assert in a test).
static_assert(std::is_invocable_v<const decltype(typed_add_one)&, const am::array&>);
static_assert(std::is_invocable_v<const decltype(typed_add_one)&, const typed_list&>);
static_assert(!std::is_invocable_v<const decltype(typed_add_one)&, const std::string&>,
              "no registered signature takes a string: the call must not compile");
static_assert(!std::is_invocable_v<const decltype(typed_add_one)&, const am::array&, const am::array&>);

namespace {
template <class M, class... A>
concept typed_callable = requires(const am::colocated_object<typed_value>& o, M pm, const A&... a) {
  o.call(pm, a...);
};
} // namespace

static_assert(typed_callable<decltype(&typed_value::plus), am::array>);
static_assert(typed_callable<decltype(&typed_value::sum), am::array, am::array>);
static_assert(!typed_callable<decltype(&typed_value::sum), am::array>, "a missing argument must not compile");
static_assert(!typed_callable<decltype(&typed_value::plus), typed_list>, "a tree for an array must not compile");
static_assert(!typed_callable<decltype(&typed_value::plus), std::string>);

TEST_CASE("colocated typed: a method called by its member pointer, with a host array given to the constructor",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  auto v = typed_value_class(am::host_array::scalar(5));
  CHECK(value_of(v.call(&typed_value::plus, am::testing::scalar_on_device(1))) == 6);
  CHECK(value_of(v.call(&typed_value::sum, am::testing::scalar_on_device(1), am::testing::scalar_on_device(2))) == 8);
  auto each = v.call(&typed_value::each_plus, typed_list{am::testing::scalar_on_device(1), am::testing::scalar_on_device(2)});
  REQUIRE(each.size() == 2);
  CHECK(value_of(each[0]) == 6);
  CHECK(value_of(each[1]) == 7);
  // The typed method wrapper is the string-named one: the same instance, the same learned specs.
  auto plus = v.method(&typed_value::plus);
  CHECK(plus.name() == "plus");
  CHECK(value_of(plus(am::testing::scalar_on_device(3))) == 8);
  CHECK(v.method<am::array(am::array)>("plus").known_signatures() == 1);
  // Specialized like any colocated function, and asynchronous from its first call.
  auto async_plus = v.method(&typed_value::plus).specialize({.out_specs_fn = [](const am::spec_tree& in) { return in[0]; }});
  CHECK(value_of(async_plus(am::testing::scalar_on_device(4, 1))) == 9);
}

TEST_CASE("colocated typed: a member function never given to def is refused naming the class",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  auto v = typed_value_class(am::host_array::scalar(1));
  CHECK_THROWS_WITH(v.call(&typed_value::unregistered, am::testing::scalar_on_device(1)),
                    Catch::Contains("colocated class 'test.typed.value' has no method registered for this member function"));
  CHECK_THROWS_AS(v.method(&typed_value::unregistered), am::value_error);
}

TEST_CASE("colocated typed: one function with an array and a tree signature, as JAX's add_one",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  CHECK(value_of(typed_add_one(am::testing::scalar_on_device(1))) == 2);
  auto tree = typed_add_one(typed_list{am::testing::scalar_on_device(1), am::testing::scalar_on_device(10)});
  REQUIRE(tree.size() == 2);
  CHECK(value_of(tree[0]) == 2);
  CHECK(value_of(tree[1]) == 11);
  CHECK(typed_add_one.overload<0>().name() == "test.typed.add_one#0");
  CHECK(typed_add_one.overload<1>().name() == "test.typed.add_one#1");
  // Each signature is registered: the string form finds it (a call from code that knows the name).
  auto by_name = am::colocated_function<typed_list(typed_list)>::registered("test.typed.add_one#1");
  CHECK(value_of(by_name(typed_list{am::testing::scalar_on_device(3)})[0]) == 4);
  // Specializing the overloads specializes every signature.
  auto async = typed_add_one.specialize({.out_specs_fn = [](const am::spec_tree& in) { return in[0]; }});
  CHECK(value_of(async(typed_list{am::testing::scalar_on_device(5, 1)})[0]) == 6);
  // A templated body works the same way.
  CHECK(value_of(typed_twice(am::testing::scalar_on_device(4))) == 8);
  auto [a, b] = typed_twice(am::testing::scalar_on_device(1), am::testing::scalar_on_device(2));
  CHECK(value_of(a) == 2);
  CHECK(value_of(b) == 4);
}

TEST_CASE("colocated typed: host arrays and values that travel are constructor arguments a worker can build from",
          "[unit][colocated]") {
  STATIC_REQUIRE(am::detail::argument_wire<am::host_array, int, std::string>::can_travel);
  auto bytes = am::detail::argument_wire<am::host_array, int>::encode(am::host_array::scalar(7), 3);
  REQUIRE(bytes.has_value());
  auto [value, n] = am::detail::argument_wire<am::host_array, int>::decode(*bytes);
  CHECK(value.item<int>() == 7);
  CHECK(n == 3);
}

#include "cli/token_command.h"

#include "cli/exit_status.h"
#include "cli/job_view.h"
#include "cli/verb_common.h"

namespace tessera::cli {

int RunTokenCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  std::string tenant;
  std::string role = "tenant";
  std::string output;
  CLI::App app{"Manage API tokens (admin tokens only).", "tessera token"};
  app.require_subcommand(1);
  CLI::App* create =
      app.add_subcommand("create",
                         "Create a token for a tenant and print it (shown once).\n\nExamples:\n"
                         "  tessera token create --tenant team-a\n"
                         "  TESSERA_TOKEN=$(tessera token create --tenant ops --role admin)");
  create->add_option("--tenant", tenant, "The tenant the token acts for")->required();
  create->add_option("--role", role, "tenant (its own jobs; default) or admin (every job, tokens)")
      ->check(CLI::IsMember({"tenant", "admin"}));
  create->add_option("-o,--output", output, "json: print the whole answer")
      ->check(CLI::IsMember({"json"}));
  AddClientFlags(*create, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  if (tenant.empty()) return ReportUsageError("--tenant: must not be empty", *env.err);
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;

  Json request = Json::object();
  request["tenant"] = tenant;
  request["role"] = role;
  absl::StatusOr<Json> created = client->PostJson("/api/v1/tokens", DumpJson(request));
  if (!created.ok()) return ReportApiError(created.status(), *env.err);
  if (output == "json") {
    *env.out << DumpJson(*created, 2) << "\n";
    return kExitOk;
  }
  const std::string token = JsonText(*created, {"token"});
  if (token.empty()) {
    *env.err << "error: the server's answer has no token\n";
    return kExitServerError;
  }
  *env.out << token << "\n";
  return kExitOk;
}

}  // namespace tessera::cli

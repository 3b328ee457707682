// English strings. zh.ts must have exactly the same keys (locales.test.ts).
const en = {
  common: { cancel: "Cancel", delete: "Delete", done: "Done", remove: "Remove", save: "Save" },
  header: { language: "Language", darkMode: "Dark mode", light: "Light", dark: "Dark", logout: "Log out" },
  menu: {
    dashboard: "Dashboard", deployments: "Deployments", playground: "Playground", workers: "Workers",
    devices: "Devices", backends: "Backends", apiKeys: "API keys",
  },
  login: {
    username: "Username", password: "Password", usernameRequired: "Enter the username",
    passwordRequired: "Enter the password", submit: "Log in",
    firstRunHint:
      "First run: the user is admin and its password is in the file initial_admin_password in the manager's --data-dir (or what --bootstrap-password set).",
  },
  state: {
    RUNNING: "Running", ERROR: "Error", PENDING: "Pending", SCHEDULED: "Scheduled", INITIALIZING: "Initializing",
    DOWNLOADING: "Downloading", STARTING: "Starting", ready: "Ready", not_ready: "Not ready", unreachable: "Unreachable",
    maintenance: "Maintenance", running: "Running", stopped: "Stopped", stopping: "Stopping", starting: "Starting", pending: "Pending", error: "Error",
  },
  dashboard: {
    title: "Dashboard", instances: "Instances", cpu: "Cluster CPU use", memory: "Cluster memory use",
    requestRate: "Requests (last 15 minutes)", requestsPerSecond: "requests/s",
    outputTokens: "Output tokens (last 15 minutes)", tokensPerSecond: "tokens/s",
    ttft: "Time to first token (last 15 minutes)", busiest: "Busiest deployments (last 15 minutes)",
    requests15m: "Requests", outputTokens15m: "Output tokens",
  },
  deployments: {
    title: "Deployments", deploy: "Deploy", name: "Name", backend: "Backend", replicas: "Replicas (ready/total)",
    state: "State", actions: "Actions", edit: "Edit", start: "Start", stop: "Stop", clone: "Clone",
    openPlayground: "Open in playground", deleteConfirm: "Delete {{name}} and stop its instances?",
    fewer: "One replica fewer", more: "One replica more",
  },
  instances: {
    name: "Instance", worker: "Worker", devices: "Devices", port: "Port", state: "State", restarts: "Restarts",
    viewLogs: "View logs", subordinate: "Subordinate worker",
  },
  logs: {
    title: "Logs of {{name}}", worker: "Worker", main: "Main", subordinate: "Subordinate", follow: "Follow",
    download: "Download", empty: "(no log lines yet)",
  },
  deploy: {
    title: "Deploy a model", editTitle: "Edit deployment", cloneTitle: "Clone deployment",
    name: "Name", nameRequired: "Enter a name", nameRule: "Letters, digits, '.', '_' and '-', starting with a letter or digit",
    localPath: "Model path on the worker", localPathHint: "An absolute path on the worker's machine: a GGUF file or a Hugging Face folder",
    localPathRequired: "Enter the model's path",
    backend: "Backend", version: "Version", defaultVersion: "default", replicas: "Replicas",
    scheduling: "Scheduling", auto: "Auto", manual: "Manual", placement: "Placement strategy",
    spread: "Spread (fewest instances per worker)", binpack: "Binpack (fill a worker first)",
    devices: "Devices", devicesRequired: "Tick at least one device",
    parameters: "Backend parameters", arguments: "{{count}} arguments",
    env: "Environment variables", addEnv: "Add a variable", envNameRequired: "Enter the variable's name",
    envNameRule: "Letters, digits and '_', not starting with a digit",
    distributed: "Distributed across workers", restartOnError: "Restart on error",
    submit: "Deploy", created: "{{name}} deployed", saved: "{{name}} saved",
  },
  workers: {
    title: "Workers", name: "Name", state: "State", ip: "IP", cpu: "CPU", memory: "Memory", labels: "Labels",
    devices: "Devices", maintenance: "Maintenance",
  },
  devices: { title: "Devices", name: "Device", worker: "Worker", type: "Type", vendor: "Vendor", index: "Index", memory: "Memory" },
  backends: {
    title: "Inference backends", add: "Add a custom backend", edit: "Edit backend", import: "Import YAML", export: "YAML",
    name: "Name", nameHint: "Custom backends' names end with -custom", nameRequired: "Enter a name",
    nameRule: "The name must end with -custom", builtin: "built-in", versions: "Versions", unnamedVersion: "(default)",
    healthCheck: "Health check path", parameterFormat: "Parameter format", description: "Description",
    placeholders: "Placeholders in the run command",
    placeholder: {
      model_path: "the deployment's model path", model_name: "the deployment's name", port: "the port the agent assigned",
      worker_ip: "the worker's IP", gpu_count: "how many devices the instance has", gpu_ids: "their indexes, comma-separated",
      ENV_NAME: "any of the deployment's environment variables",
    },
    version: "Version", versionName: "Version name", versionRequired: "Enter the version's name",
    entrypoint: "Entrypoint", runCommand: "Run command", env: "Environment", envHint: "One NAME=value per line",
    addVersion: "Add a version", defaultVersion: "Default version", defaultParameters: "Default backend parameters",
    formatSpace: "space (--flag value)", formatEqual: "equal (--flag=value)",
    deleteConfirm: "Delete the backend {{name}}?", yamlNotObject: "The YAML file does not hold a backend (a mapping)",
  },
  keys: {
    title: "API keys", create: "Create an API key", name: "Name", key: "Key", scope: "Scope", models: "Deployments",
    allModels: "all", expires: "Expires", created: "Created", never: "Never", expiry: "Expires in",
    days7: "7 days", days30: "30 days", days180: "180 days",
    scopes: { inference: "Inference (/v1)", management: "Management (/v2)", all: "Everything" },
    allowedModels: "Allowed deployments", allowedModelsHint: "Empty: every deployment",
    nameRequired: "Enter a name", scopeRequired: "Pick at least one scope",
    revoke: "Revoke", revokeConfirm: "Revoke {{name}}? Requests with it are refused at once.",
    createdTitle: "Your new API key", shownOnce: "Copy it now: it is shown only this once.",
  },
  playground: {
    title: "Playground", pickModel: "Pick a deployment", empty: "Send a message to start.", stop: "Stop",
    clear: "Clear", send: "Send", inputPlaceholder: "Type a message (Enter sends, Shift+Enter adds a line)",
    parameters: "Parameters", viewCode: "View code", compare: "Compare two deployments",
    thinking: "Thinking", thinkingHint: "Sends chat_template_kwargs.enable_thinking",
    system: "System prompt", temperature: "Temperature", reasoning: "Reasoning", stopped: "stopped",
    ttft: "TTFT", tokensPerSecond: "tokens/s", tokens: "{{count}} tokens", editHint: "Double-click to edit",
    codeKeyHint: "Set TANDEM_API_KEY to a key from the API keys page.",
    role: { system: "System", user: "You", assistant: "Assistant" },
  },
  serve: {
    keyTitle: "API key", keyHint: "This server was started with --api-key. Enter the key; it is kept in this browser.",
  },
};

export default en;

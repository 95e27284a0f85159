CREATE TABLE `webhook` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer DEFAULT 0 NOT NULL,
	`owner_id` integer DEFAULT 0 NOT NULL,
	`type` text NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`url` text NOT NULL,
	`http_method` text DEFAULT 'POST' NOT NULL,
	`content_type` text DEFAULT 'json' NOT NULL,
	`secret_enc` text DEFAULT '' NOT NULL,
	`auth_header_enc` text DEFAULT '' NOT NULL,
	`events` text DEFAULT '["push"]' NOT NULL,
	`branch_filter` text DEFAULT '' NOT NULL,
	`meta` text DEFAULT '{}' NOT NULL,
	`is_active` integer DEFAULT false NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `IDX_webhook_owner_id` ON `webhook` (`owner_id`);--> statement-breakpoint
CREATE INDEX `IDX_webhook_repo_id` ON `webhook` (`repo_id`);